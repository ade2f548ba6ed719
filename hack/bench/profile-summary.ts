// Where a CPU profile's time went: self time per function and per area (a gateway folder, a
// Node.js internal module, the garbage collector), as a share of the busy time. For the
// profiles of gateway-throughput.ts rows:
//
//   node --cpu-prof --cpu-prof-dir DIR --import tsx hack/bench/gateway-throughput.ts \
//     --this-node --rows 3 --rounds 1 --skip-memory
//   npx tsx hack/bench/profile-summary.ts DIR/*.cpuprofile [--top 25]
//
// Idle time (the event loop waiting) is left out of every share.
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The folder a frame's code lives in: `gateway/proxy/fast`, `node:internal/streams`, `(gc)`. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const internal = /^node:internal\/([^/]+)/.exec(url);
  if (internal !== null) return `node:internal/${internal[1]}`;
  if (url.startsWith("node:")) return url;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules !== null) return `npm:${modules[1]}`;
  const own = /\/((?:gateway|core|kube|hack)(?:\/[^/]+)*)\/[^/]+$/.exec(url);
  return own === null ? url : own[1]!;
}

function frameName(frame: CallFrame): string {
  const file = frame.url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, "");
  return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
}

export interface Share {
  name: string;
  us: number;
  percent: number;
}

function shares(totals: Map<string, number>, busy: number): Share[] {
  return [...totals.entries()]
    .map(([name, us]) => ({ name, us, percent: (100 * us) / busy }))
    .sort((a, b) => b.us - a.us);
}

/** Self time by function and by area, in µs and as a share of the busy (non-idle) time. */
export function summarize(profile: CpuProfile): {
  busyUs: number;
  areas: Share[];
  functions: Share[];
} {
  const byId = new Map(profile.nodes.map(node => [node.id, node.callFrame]));
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (frame === undefined || frame.functionName === "(idle)") return;
    busy += delta;
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + delta);
    const name = frameName(frame);
    functions.set(name, (functions.get(name) ?? 0) + delta);
  });
  return { busyUs: busy, areas: shares(areas, busy), functions: shares(functions, busy) };
}

function print(path: string, top: number): void {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const { busyUs, areas, functions } = summarize(profile);
  const line = (s: Share) => `  ${s.percent.toFixed(1).padStart(5)} %  ${s.name}`;
  console.log(`${path}: ${(busyUs / 1e6).toFixed(2)} s busy`);
  console.log(" by area:");
  for (const share of areas.slice(0, top)) console.log(line(share));
  console.log(" by function (self time):");
  for (const share of functions.slice(0, top)) console.log(line(share));
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const topIndex = args.indexOf("--top");
  const top = topIndex < 0 ? 25 : Number(args[topIndex + 1]);
  const paths = args.filter((_, i) => topIndex < 0 || (i !== topIndex && i !== topIndex + 1));
  if (paths.length === 0) {
    console.error("usage: profile-summary.ts FILE.cpuprofile... [--top N]");
    process.exit(2);
  }
  for (const path of paths) print(path, top);
}
