// bulwark-gateway: the L7 gateway for Ingress objects of class `bulwark`. This file wires the
// control side (watch, guard, rollout, last good view on disk, admin port) to the data plane and
// runs until SIGTERM/SIGINT, then drains.
import { INGRESS_CLASS } from "../core/names";
import { gatewayMetrics } from "./admin/metrics";
import { startAdminServer } from "./admin/server";
import { GatewayController, type LogFn } from "./controller";
import { startDataPlane } from "./data-plane";
import { GatewayScrapeRegistry } from "./observability/scrape";
import { readSettings, type Settings } from "./settings";
import { ApiClient } from "../kube/api-client";
import type { ResourceKind } from "./source/cache";
import { Source } from "./source/source";
import { createLogger } from "../kube/log";
import { runWorkload, untilStopSignal, workloadKubeConfig } from "../kube/workload-process";

const NAME = "bulwark-gateway";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const VERSION = (require("../package.json") as { version: string }).version;

const HELP = `${NAME} ${VERSION}: the L7 gateway for Ingress objects of class ${INGRESS_CLASS}

Settings (environment):
  BULWARK_POD_NAME             the pod name, ending in -<ordinal> (required; batched rollout)
  KUBECONFIG                   kubeconfig file; in-cluster config when unset
  BULWARK_INGRESS_KUBECONFIG   kubeconfig of a separate ingress storage API server: Ingresses, TLS Secrets,
                               IngressClasses and checksum objects are read there (Tengine-Ingress's
                               ingress storage cluster); Services and EndpointSlices from KUBECONFIG
  BULWARK_EXCLUDED_NAMESPACES=kube-system,pepr-system   namespaces not served (the webhooks skip them)
  BULWARK_INGRESS_REFERRERS=  BULWARK_CANARY_REFERRERS=   Tengine-Ingress's ingress-referrer and
                               canary-referrer allow-lists (comma lists)
  BULWARK_HTTP_PORT=8080  BULWARK_HTTPS_PORT=8443  BULWARK_ADMIN_PORT=9090
  BULWARK_LISTEN_HOST=0.0.0.0  BULWARK_WORKERS=1
  BULWARK_LISTEN_MODE=round-robin   how workers share the ports: round-robin (the primary accepts and
                               hands connections out) or reuse-port (a socket per worker, SO_REUSEPORT;
                               Node >= 22.12, round robin otherwise)
  BULWARK_STATE_DIR=/var/lib/bulwark-gateway   where the last good view is kept
  BULWARK_INGRESS_CHECKSUM=off  BULWARK_SECRET_CHECKSUM=off   checksum guard per kind: off, observe
                               (verify and report what enforce would refuse) or enforce (true/false:
                               enforce/off)
  BULWARK_WATCH_NAMESPACES=   comma list; empty: all
  BULWARK_CHECKSUM_PUBLISHER_NAMESPACES=bulwark-system   where checksum objects are trusted (the only
                               place they are read; old name BULWARK_CHECKSUM_NAMESPACES)
  BULWARK_CHECKSUM_GRACE_SECONDS=60   how long the checksum object before the newest still counts
  BULWARK_CHECKSUM_REQUIRE_SIGNATURE=false   only objects signed by a key in BULWARK_CHECKSUM_KEYS
  BULWARK_CHECKSUM_KEYS=bulwark-system/bulwark-checksum-keys   ConfigMap of Ed25519 public keys (PEM)
  BULWARK_DRAIN_SECONDS=10  LOG_LEVEL=info
  BULWARK_TRAFFIC_METRICS=true  BULWARK_ACCESS_LOG=true   per-host metrics; JSON line per request
  BULWARK_MAX_CANARIES=20   canary ingresses per host/path (Tengine's max-canary-ing-num)
  BULWARK_SSL_REDIRECT_PORT=443   the HTTPS port ssl-redirect sends clients to
  BULWARK_CANARY_MATCH=exact   canary values compare exact (ingress-nginx) or case-insensitive (Tengine)
  BULWARK_LIMIT_STATUS=503   the status of requests over limit-rps/limit-rpm/limit-connections (400..599)
  BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS=5  BULWARK_AUTH_READ_TIMEOUT_SECONDS=15   auth-url's timeouts (then 500)
Admin port: /healthz (JSON detail), /readyz, /metrics.
`;

function logger(level: Settings["logLevel"]): LogFn {
  const log = createLogger(NAME, level);
  return (lvl, message, fields = {}) => void log.log(lvl, message, fields);
}

function watchedKinds(settings: Settings): ResourceKind[] {
  const kinds: ResourceKind[] = [
    "ingress",
    "secret",
    "authSecret",
    "endpointSlice",
    "service",
    "ingressClass",
  ];
  if (settings.checksum.ingress !== "off") kinds.push("ingressChecksum");
  if (settings.checksum.secret !== "off") kinds.push("secretChecksum");
  const guarded = settings.checksum.ingress !== "off" || settings.checksum.secret !== "off";
  if (guarded && settings.signatures.required) kinds.push("checksumKeys");
  return kinds;
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("--version")) {
    process.stdout.write(argv.includes("--help") ? HELP : `${VERSION}\n`);
    return 0;
  }
  const read = readSettings(process.env);
  if (!read.ok) {
    process.stderr.write(`${NAME}: ${read.message}\n`);
    return 2;
  }
  const settings = read.settings;
  const log = logger(settings.logLevel);
  const stopped = untilStopSignal();
  const metrics = gatewayMetrics();
  const dataPlane = await startDataPlane({
    httpPort: settings.httpPort,
    httpsPort: settings.httpsPort,
    host: settings.host,
    workers: settings.workers,
    listenMode: settings.listenMode,
    compile: settings.compile,
    observe: settings.observe,
    frontDoor: settings.frontDoor,
  });
  const controller = new GatewayController({ ...settings, dataPlane, metrics, log });
  await controller.restore();
  const scrape = new GatewayScrapeRegistry(metrics.registry, () => dataPlane.trafficMetrics());
  const admin = await startAdminServer(controller, scrape, {
    port: settings.adminPort,
    host: settings.host,
  });
  const workload = new ApiClient(workloadKubeConfig(settings.kubeconfig));
  const ingressStorage =
    settings.ingressKubeconfig === undefined
      ? undefined
      : new ApiClient(workloadKubeConfig(settings.ingressKubeconfig));
  const source = new Source(
    { workload, ingressStorage },
    {
      namespaces: settings.watchNamespaces,
      checksumNamespaces: settings.checksumNamespaces,
      checksumKeys: settings.signatures.keys,
      kinds: watchedKinds(settings),
      probeIntervalMs: 2000,
      reflector: { log: (level, message, fields) => log(level, message, fields) },
      onListed: () => controller.onListed(),
    },
    change => controller.onChange(change),
  );
  controller.attach(source);
  source.start();
  const apiUp = setInterval(() => metrics.apiServerUp.set(source.status().reachable ? 1 : 0), 1000);
  log("info", "gateway started", {
    pod: settings.podName,
    ordinal: settings.ordinal,
    host: settings.host,
    // The bound ports: a port set to 0 picks a free one (tests and benchmarks read them here).
    httpPort: dataPlane.httpPort,
    httpsPort: dataPlane.httpsPort,
    adminPort: admin.port,
    checksum: settings.checksum,
    ingressStorage: settings.ingressKubeconfig !== undefined,
  });

  const signal = await stopped;
  log("info", "stopping: draining connections", { signal, drainMs: settings.drainMs });
  admin.drain();
  clearInterval(apiUp);
  await source.stop();
  await controller.stop();
  await dataPlane.close({ drainMs: settings.drainMs });
  await admin.close();
  log("info", "stopped", { signal });
  return 0;
}

if (require.main === module) runWorkload(NAME, main);
