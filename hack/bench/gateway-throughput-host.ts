// One gateway row in a process of its own, for gateway-throughput.ts's --baseline runs: each
// checkout's data plane runs alone in its process. Loaded side by side into the bench's process,
// the checkout loaded second measured 4–6 µs per request dearer in an A/A run (the same commit
// on both sides), which is as large as the changes an A/B is meant to show.
//   npx tsx hack/bench/gateway-throughput-host.ts '<HostConfig as JSON>'
// Prints one JSON line, {"pids": [...]}, once the row's view is served; SIGTERM closes it.
import { join, resolve } from "node:path";
import type { startDataPlane } from "../../gateway/data-plane";
import { planePids, ROWS, serveRow, type RowServing } from "./gateway-throughput-rows";

/** The row by its index in ROWS (the config crosses a process boundary as JSON). */
export type HostConfig = Omit<RowServing, "row"> & {
  /** The checkout whose data plane serves. */
  checkout: string;
  row: number;
};

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? "") as HostConfig;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a checkout chosen at run time
  const loaded = require(join(resolve(config.checkout), "gateway/data-plane")) as {
    startDataPlane: typeof startDataPlane;
  };
  const row = ROWS[config.row];
  if (row === undefined) throw new Error(`no row ${config.row}`);
  const plane = await serveRow(loaded.startDataPlane, { ...config, row });
  process.once("SIGTERM", () => void plane.close({ drainMs: 500 }).then(() => process.exit(0)));
  process.stdout.write(`${JSON.stringify({ pids: planePids(plane) })}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
