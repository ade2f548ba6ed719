// bulwark-permission-server: answers the injected init containers, grants each pod's permissions
// through the providers (rate-limited, with breakers and backoff), serves the finalizer path's
// revoke call. Several replicas share their state through Kubernetes objects (README.md).
import { providerBuilder } from "./providers/build";
import { createLogger } from "../kube/log";
import { startServer } from "./server";
import { loadSettings } from "./settings";
import { runWorkload, untilStopSignal } from "../kube/workload-process";

const NAME = "bulwark-permission-server";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const VERSION = (require("../package.json") as { version: string }).version;

const HELP = `${NAME} ${VERSION}: grants pods their PermissionGroup before they start

Usage: ${NAME} [--port N] [--metrics-port N] [--host ADDR] [--namespace NS] [--kubeconfig FILE]

Settings (environment; durations like 500ms, 2m, 1h):
  BULWARK_PERMISSION_PORT=8443  BULWARK_PERMISSION_HOST=0.0.0.0
  BULWARK_PERMISSION_METRICS_PORT                  plain-HTTP /metrics (unset: only on the API port)
  BULWARK_TLS_CERT_PATH  BULWARK_TLS_KEY_PATH      serve HTTPS (both, or neither)
  KUBECONFIG                                       in-cluster config when unset
  BULWARK_NAMESPACE=bulwark-system                 where the breaker ConfigMap lives
  BULWARK_BREAKER_CONFIGMAP=bulwark-permission-breakers
  BULWARK_PERMISSION_AUDIENCE=bulwark-permission-server   the init token's audience
  BULWARK_REPLICA_NAME=<hostname>                  this replica's name in pod claims
  BULWARK_REPLICAS=1                               replicas sharing each provider's rate limit
  BULWARK_BACKOFF_DURATION=2m BULWARK_BACKOFF_FACTOR=2 BULWARK_BACKOFF_JITTER=1
  BULWARK_BACKOFF_STEPS=5 BULWARK_BACKOFF_CAP=1h   per-pod backoff (k8s wait.Backoff)
  BULWARK_BREAKER_THRESHOLD=3                      failed attempts that open a pod's breaker
  BULWARK_PROVIDER_BREAKER_FAILURES=5 BULWARK_PROVIDER_BREAKER_OPEN=30s
  BULWARK_GRANT_TIMEOUT=10m                        callable time one permission may take
  BULWARK_POLL_INTERVAL=2s  BULWARK_RETRY_INTERVAL=1s  BULWARK_RETRY_MAX_INTERVAL=30s
  BULWARK_CLAIM_TTL=30s  BULWARK_LONG_POLL_MAX=30s  BULWARK_PRUNE_INTERVAL=1m
  BULWARK_CMDB_PROVIDER  BULWARK_CMDB_PARAMS='{"resource":"cmdb/pods","action":"write"}'
  LOG_LEVEL=info
Endpoints: POST /v1/grants, GET /v1/grants/NS/POD, POST /v1/revoke, POST /v1/reset,
/healthz, /metrics (see permission-server/README.md).
`;

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help")) return (void process.stdout.write(HELP), 0);
  if (argv.includes("--version")) return (void process.stdout.write(`${VERSION}\n`), 0);
  const loaded = loadSettings(process.env, argv);
  if (!loaded.ok) {
    process.stderr.write(`${NAME}: ${loaded.message}\n`);
    return 2;
  }
  const { settings } = loaded;
  const log = createLogger(NAME, settings.logLevel);
  const stopped = untilStopSignal();
  const server = await startServer(settings, { log, build: providerBuilder(settings.replicas) });
  const signal = await stopped;
  log.info("stopping", { signal });
  await server.stop();
  return 0;
}

if (require.main === module) runWorkload(NAME, main);
