// `npm run demo:cut -- NODE`, `demo:kill -- NODE`, `demo:heal -- NODE`: tell the running local
// stack (through marker files in its run folder, see demo-control.ts) to stop renewing a node's
// Lease (cut: the node goes Unknown, its daemon still votes it healthy, so Bulwark keeps it), to
// also SIGKILL its edge-health daemon (kill: its peers vote it unhealthy, so it is evicted), or to
// undo both (heal).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../../packaging/build";
import { demoDir, markerPath, parseDemoRequest, ZONE_FILE, type ZoneInfo } from "./demo-control";

const runDir = join(process.env.BULWARK_STATE_DIR ?? join(ROOT, ".bulwark"), "run");
const zoneFile = join(demoDir(runDir), ZONE_FILE);
const zone = existsSync(zoneFile)
  ? (JSON.parse(readFileSync(zoneFile, "utf8")) as ZoneInfo)
  : undefined;
const request = parseDemoRequest(process.argv.slice(2), zone);
if (!request.ok) {
  console.error(request.message);
  process.exit(2);
}
const { action, node } = request;
const mark = (kind: "cut" | "kill"): void => {
  const path = markerPath(runDir, kind, node);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${new Date().toISOString()}\n`);
};
const EXPLAIN = {
  cut: `${node} is cut off from the control plane: its Lease is no longer renewed. Its daemon still answers its peers, so it stays voted healthy: watch it go Unknown and keep no NoExecute taint:
  kubectl get nodes -L superedgehealth/topology-zone -w
  kubectl get node ${node} -o jsonpath='{.spec.taints}'`,
  kill: `${node} is cut off and its edge-health daemon killed: its peers vote it unhealthy ("false"), and the node-lifecycle controller taints it NoExecute:
  kubectl get node ${node} -o jsonpath='{.metadata.annotations.superedgehealth/node-health} {.spec.taints}'`,
  heal: `${node}: Lease renewed and daemon running again.`,
};
if (action === "heal") {
  for (const kind of ["cut", "kill"] as const)
    rmSync(markerPath(runDir, kind, node), { force: true });
} else {
  mark("cut");
  if (action === "kill") mark("kill");
}
console.log(EXPLAIN[action]);
