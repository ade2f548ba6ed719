// The Node.js binary the image runs (hack/node-runtime/fetch.sh caches it; the Dockerfile's
// NODE_VERSION names it), for what must run as the image would: the entrypoint test, benchmarks.
import { execFileSync } from "node:child_process";
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
