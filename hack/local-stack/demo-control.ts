// How `npm run demo:cut|kill|heal -- NODE` reaches a running local stack: a marker file per node
// in the stack's run folder (`.bulwark/run/demo/<action>/<node>`), which the stack polls. Files,
// not a port: the commands work with nothing but the state folder, and a stale marker from an
// earlier run is wiped with the run folder at the next start.
import { join } from "node:path";

export const DEMO_ACTIONS = ["cut", "kill", "heal"] as const;
export type DemoAction = (typeof DEMO_ACTIONS)[number];

export const DEMO_DIR = "demo";
/** What the stack writes at start: the nodes a demo command may name. */
export const ZONE_FILE = "zone.json";

export interface ZoneInfo {
  zone: string;
  nodes: { name: string; address: string; daemon: string }[];
}

export function demoDir(runDir: string): string {
  return join(runDir, DEMO_DIR);
}

/** The marker that says `node` is cut off (its Lease no longer renewed) or its daemon killed. */
export function markerPath(runDir: string, action: "cut" | "kill", node: string): string {
  return join(demoDir(runDir), action, node);
}

export type DemoRequest =
  | { ok: true; action: DemoAction; node: string }
  | { ok: false; message: string };

/** Parses `ACTION NODE` against the zone the stack runs; the message says what to type instead. */
export function parseDemoRequest(argv: readonly string[], zone: ZoneInfo | undefined): DemoRequest {
  const [action, node, ...rest] = argv;
  const usage = "usage: npm run demo:cut|demo:kill|demo:heal -- NODE";
  if (!DEMO_ACTIONS.includes(action as DemoAction)) {
    return { ok: false, message: `${usage} (unknown action ${JSON.stringify(action ?? "")})` };
  }
  if (zone === undefined) {
    return { ok: false, message: "no local stack is running here: start it with `npm start`" };
  }
  const names = zone.nodes.map(n => n.name);
  if (node === undefined || rest.length > 0) {
    return { ok: false, message: `${usage}; NODE is one of ${names.join(", ")}` };
  }
  if (!names.includes(node)) {
    return {
      ok: false,
      message: `${node} is not a node of the local edge zone; one of ${names.join(", ")}`,
    };
  }
  return { ok: true, action: action as DemoAction, node };
}
