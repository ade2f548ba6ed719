// The Node.js binary the image runs (hack/node-runtime/fetch.sh caches it; the Dockerfile's
// NODE_VERSION names it), for what must run as the image would: the entrypoint test, benchmarks.
import { execFileSync, spawn } from "node:child_process";
import { resolve } from "node:path";

const FETCH_SCRIPT = resolve(__dirname, "fetch.sh");

let cached: string | undefined;

/** The image's `node` binary; fetches it (about 50 MB, once per machine) when missing. */
export function imageNode(): string {
  cached ??= execFileSync("bash", [FETCH_SCRIPT], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 600_000,
  }).trim();
  return cached;
}

/**
 * A benchmark's numbers are for the runtime the image ships: re-runs this script on the image's
 * Node.js (same arguments, same loader) when this one differs. True when it did (the caller stops;
 * the process exits with the child's code); false when this already is the image's Node.js.
 */
export async function rerunOnImageNode(): Promise<boolean> {
  const node = imageNode();
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  if (version === process.version) return false;
  console.log(`re-running on the image's Node.js ${version} (this one is ${process.version})`);
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  const code = await new Promise<number | null>(resolve => child.once("exit", resolve));
  process.exit(code ?? 1);
}
