// The edge-health daemon in the local stack (`npm start`): one daemon as a local process, for a
// Node object `bulwark-local-edge` (InternalIP 127.0.0.1, zone `local`) that this creates when
// missing, with a random HMAC key in a file under `dir`. There is no kubelet, so the kubelet check
// is off and the peer-daemon check (weight 1) decides. Alone in its zone, the node is a group of
// one and is never voted on (see edge-health-daemon/README.md); `GET /localinfo` shows the view.
// Add nodes with the same zone label and more daemons to see votes.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EDGE_ZONE_LABEL } from "../../core/names";
import { loadKubeConfig } from "../control-plane/kube";
import { waitUntil } from "../../test/harness/wait";
import { freePort } from "../control-plane/ports";
import { startProcess } from "../control-plane/processes";
import type { LocalWorkload, LocalWorkloadContext } from "./workload";

export const LOCAL_EDGE_NODE = "bulwark-local-edge";

export async function startEdgeHealth(options: LocalWorkloadContext): Promise<LocalWorkload> {
  const { kubeconfigPath, dir, log } = options;
  const core = loadKubeConfig(kubeconfigPath).makeApiClient(CoreV1Api);
  const exists = await core.readNode({ name: LOCAL_EDGE_NODE }).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await core.createNode({
      body: { metadata: { name: LOCAL_EDGE_NODE, labels: { [EDGE_ZONE_LABEL]: "local" } } },
    });
  }
  await core.patchNodeStatus(
    {
      name: LOCAL_EDGE_NODE,
      body: { status: { addresses: [{ type: "InternalIP", address: "127.0.0.1" }] } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  const edgeDir = join(dir, "edge-health");
  mkdirSync(edgeDir, { recursive: true });
  const keyFile = join(edgeDir, "hmac.key");
  writeFileSync(keyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
  const port = await freePort();
  const main = resolve(__dirname, "../../edge-health-daemon/main.ts");
  const proc = startProcess(
    "edge-health",
    process.execPath,
    [
      "--import",
      "tsx",
      main,
      `--node-name=${LOCAL_EDGE_NODE}`,
      "--listen-address=127.0.0.1",
      `--port=${port}`,
      `--kubeconfig=${kubeconfigPath}`,
      `--hmac-key-file=${keyFile}`,
      "--check-kubelet=off",
      "--check-daemon=weight=1",
    ],
    { logFile: join(edgeDir, "edge-health.log"), env: { ...process.env, ...options.env } },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    "the edge-health daemon's /healthz",
    async () => (await fetch(`${url}/healthz`)).ok,
  );
  log(`edge-health daemon for node ${LOCAL_EDGE_NODE} on ${url}`);
  return {
    processes: [proc],
    stop: () => proc.stop(),
    lines: [`  edge-health    ${url}/localinfo (node ${LOCAL_EDGE_NODE}; log ${proc.logFile})`],
  };
}
