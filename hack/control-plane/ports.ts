import { readFileSync } from "node:fs";
import { createServer } from "node:net";

// A port is picked here and bound later by another process. A port from the kernel's ephemeral
// range (what `listen(0)` returns) can be taken in between by anything that connects out: the
// API server dialling etcd, a client's next keep-alive socket. That happened in CI (a gateway's
// `listen EADDRINUSE`). So ports come from below the ephemeral range, where the kernel never
// picks on its own, at random, so that two test processes rarely try the same one.
const LOWEST = 10_000;
const LINUX_EPHEMERAL: PortRange = { low: 32_768, high: 60_999 };

export interface PortRange {
  low: number;
  high: number;
}

/** `/proc/sys/net/ipv4/ip_local_port_range` ("32768\t60999"), or Linux's default when unreadable. */
export function parsePortRange(text: string | undefined): PortRange {
  const [low = NaN, high = NaN] = (text ?? "").trim().split(/\s+/).map(Number);
  const valid = Number.isInteger(low) && Number.isInteger(high) && 0 < low && low <= high;
  return valid ? { low, high } : LINUX_EPHEMERAL;
}

function ephemeralRange(): PortRange {
  try {
    return parsePortRange(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"));
  } catch {
    return LINUX_EPHEMERAL;
  }
}

/** The ports to pick from: [LOWEST, 65535] without the ephemeral range. */
export function candidateRanges(ephemeral: PortRange): PortRange[] {
  const ranges: PortRange[] = [];
  if (ephemeral.low > LOWEST) ranges.push({ low: LOWEST, high: ephemeral.low - 1 });
  if (ephemeral.high < 65_535)
    ranges.push({ low: Math.max(LOWEST, ephemeral.high + 1), high: 65_535 });
  return ranges;
}

/** The `index`th port of `ranges`, counted across them. */
function nthPort(ranges: PortRange[], index: number): number {
  let rest = index;
  for (const range of ranges) {
    const size = range.high - range.low + 1;
    if (rest < size) return range.low + rest;
    rest -= size;
  }
  throw new RangeError(`port index ${index} is past the candidate ranges`);
}

// Every port handed out by this process: its probe closes the socket, so nothing else here
// would stop a second caller getting the same port.
const handedOut = new Set<number>();
const MAX_TRIES = 1_000;

/** A TCP port that was free a moment ago, outside the ephemeral range, never handed out here before. */
export async function freePort(): Promise<number> {
  const ranges = candidateRanges(ephemeralRange());
  const count = ranges.reduce((sum, r) => sum + r.high - r.low + 1, 0);
  if (count === 0)
    throw new Error("the ephemeral range covers every port from 10000: none to pick");
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const port = nthPort(ranges, Math.floor(Math.random() * count));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free TCP port outside the ephemeral range after ${MAX_TRIES} tries`);
}

/** Whether a listener on every address (which conflicts with any other bind of the port) succeeds. */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>(resolve => {
    server.once("error", () => resolve(false));
    server.listen({ port, exclusive: true }, () => resolve(true));
  });
  if (listening) await new Promise(resolve => server.close(resolve));
  return listening;
}
