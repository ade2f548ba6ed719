// One gateway row in a process of its own, for gateway-throughput.ts's --baseline runs: each
// checkout's data plane runs alone in its process. Loaded side by side into the bench's process,
// the checkout loaded second measured 4–6 µs per request dearer in an A/A run (the same commit
// on both sides), which is as large as the changes an A/B is meant to show.
//   npx tsx hack/bench/gateway-throughput-host.ts '<HostConfig as JSON>'
// Prints one JSON line, {"pids": [...]}, once the row's view is served; SIGTERM closes it.
import { join, resolve } from "node:path";
import type { startDataPlane } from "../../gateway/data-plane";
import type { ListenMode } from "../../gateway/listen-mode";
import { benchView, ROWS } from "./gateway-throughput-rows";

export interface HostConfig {
  /** The checkout whose data plane serves. */
  checkout: string;
  /** The row, by index in ROWS. */
  row: number;
  port: number;
  backendPort: number;
  logPath: string;
  workers: number;
  listenMode: ListenMode;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? "") as HostConfig;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a checkout chosen at run time
  const loaded = require(join(resolve(config.checkout), "gateway/data-plane")) as {
    startDataPlane: typeof startDataPlane;
  };
  const row = ROWS[config.row];
  if (row === undefined) throw new Error(`no row ${config.row}`);
  const plane = await loaded.startDataPlane({
    httpPort: config.port,
    host: "127.0.0.1",
    workers: config.workers,
    listenMode: config.listenMode,
    defaultCertificates: [],
    observe: row.log ? { ...row.observe, accessLogPath: config.logPath } : row.observe,
  });
  process.once("SIGTERM", () => void plane.close({ drainMs: 500 }).then(() => process.exit(0)));
  const applied = await plane.apply(benchView(config.backendPort, row.work));
  if (applied.problems.length > 0) throw new Error(applied.problems.join("\n"));
  const pids = [...new Set([process.pid, ...plane.status().workers.map(w => w.pid)])];
  process.stdout.write(`${JSON.stringify({ pids })}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
