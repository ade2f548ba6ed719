// bulwark-init: the init container Bulwark injects into pods that name a permission group.
// One authenticated call to the permission server, then waits until the pod is granted: exit 0;
// exit 1 with one line why when the server refuses it or the pod's breaker is open.
import { realIo, runInit } from "./client";
import { readFileSync } from "node:fs";
import { loadCa, loadInitSettings } from "./settings";
import { runWorkload } from "../kube/workload-process";

const NAME = "bulwark-init";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const VERSION = (require("../package.json") as { version: string }).version;

const HELP = `${NAME} ${VERSION}: waits until the permission server has granted this pod its permissions

Settings (environment, set by the injection):
  POD_NAME POD_NAMESPACE POD_UID POD_IP       the pod, from the Downward API (required)
  BULWARK_PERMISSION_SERVER                   the permission server's URL (required)
  BULWARK_TOKEN_PATH                          the projected service-account token
  BULWARK_PERMISSION_CA                       PEM: the only CA the https server may chain to
  BULWARK_PERMISSION_CA_PATH                  the same as a file (set one of the two, or neither
                                              for Node's public roots)
  BULWARK_INIT_WAIT_SECONDS=25                how long one status long-poll may wait
  BULWARK_INIT_RETRY_MAX_SECONDS=10           longest wait between retries of transient errors
  BULWARK_INIT_REQUEST_TIMEOUT_SECONDS=10
Exit status: 0 granted; 1 refused (one line on stderr says why; an untrusted server certificate
is refused at once and the token is never sent); 2 bad settings.
`;

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help")) return (void process.stdout.write(HELP), 0);
  if (argv.includes("--version")) return (void process.stdout.write(`${VERSION}\n`), 0);
  const loaded = loadInitSettings(process.env);
  if (!loaded.ok) {
    process.stderr.write(`${NAME}: ${loaded.message}\n`);
    return 2;
  }
  const ca = loadCa(loaded.settings.ca, path => readFileSync(path, "utf8"));
  if (!ca.ok) {
    process.stderr.write(`${NAME}: ${ca.message}\n`);
    return 2;
  }
  const result = await runInit(loaded.settings, realIo(ca.ca));
  if (result.granted) {
    process.stdout.write(`${NAME}: granted\n`);
    return 0;
  }
  process.stderr.write(`${NAME}: ${result.reason.replace(/\s+/g, " ")}\n`);
  return 1;
}

if (require.main === module) runWorkload(NAME, main);
