// How several data-plane workers share the listening ports. "round-robin" (node:cluster's
// default on Linux): the primary accepts every connection and hands it to a worker in turn.
// "reuse-port": each worker binds its own socket with SO_REUSEPORT and the kernel spreads new
// connections over them by a hash of the addresses, so the primary accepts nothing. Node accepts
// the `reusePort` listen option from 22.12 (22.x) and 23.1; on older runtimes a worker's own
// socket would fail with EADDRINUSE, so the mode falls back to round robin there. What reuse-port
// gives up: the hash can spread a few clients unevenly, connections queued on a dying worker's
// socket are reset, and any process of the same user may bind the port too (in the gateway's
// container there is none). hack/bench/README.md has the measurement that kept round robin the
// default.

export const LISTEN_MODES = ["round-robin", "reuse-port"] as const;
export type ListenMode = (typeof LISTEN_MODES)[number];

/** Whether Node `version` ("v24.1.0") takes `reusePort` in `server.listen`. */
export function supportsReusePort(version: string): boolean {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major === 22) return minor >= 12;
  if (major === 23) return minor >= 1;
  return major > 23;
}

/** The mode the workers use: `requested` when this runtime can, round robin otherwise. */
export function effectiveListenMode(
  requested: ListenMode,
  version: string = process.version,
  platform: NodeJS.Platform = process.platform,
): ListenMode {
  if (requested === "reuse-port" && supportsReusePort(version) && platform === "linux")
    return "reuse-port";
  return "round-robin";
}
