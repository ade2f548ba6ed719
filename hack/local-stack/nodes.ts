// The local stack's node keeper: a stand-in for the kubelet's node heartbeat, for every node of
// the stack. It creates each Node, posts its Ready status, and renews its Lease every two seconds,
// so kube-controller-manager sees them all healthy (none Unknown, no "all Nodes are not-Ready"
// master-disruption mode). A node with a `cut` marker (`npm run demo:cut -- NODE`) is left alone:
// its Lease runs out and the node-lifecycle controller marks it Unknown, as it would a node cut
// off from the cloud. When the marker goes (`demo:heal`), its status is posted Ready again.
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { existsSync } from "node:fs";
import { isConflict } from "../../kube/api-errors";
import { markerPath } from "./demo-control";
import {
  KEEPER_MANAGER,
  needsReadyStatus,
  nodeLease,
  readyNode,
  readyStatus,
  type LocalNode,
} from "./node-status";

export interface NodeKeeper {
  /** Whether `npm run demo:cut` has cut this node off (its Lease is not renewed). */
  isCut(name: string): boolean;
  stop(): void;
}

export async function keepNodes(options: {
  kc: KubeConfig;
  runDir: string;
  nodes: LocalNode[];
  log: (message: string) => void;
  renewEveryMs?: number;
}): Promise<NodeKeeper> {
  // Every node is created, Ready and its Lease fresh before this resolves.
  const { kc, runDir, nodes, log } = options;
  const core = kc.makeApiClient(CoreV1Api);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const isCut = (name: string): boolean => existsSync(markerPath(runDir, "cut", name));
  const cutSeen = new Set<string>();

  const postStatus = (node: LocalNode) =>
    core.patchNodeStatus(
      { name: node.name, body: readyStatus(node, new Date()) },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  const renew = (node: LocalNode) =>
    objects.patch(
      nodeLease(node.name, new Date()) as KubernetesObject,
      undefined,
      undefined,
      KEEPER_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  const beat = async (node: LocalNode): Promise<void> => {
    if (isCut(node.name)) {
      if (!cutSeen.has(node.name))
        log(`node ${node.name} is cut off: its Lease is no longer renewed`);
      cutSeen.add(node.name);
      return;
    }
    if (cutSeen.delete(node.name)) log(`node ${node.name} is back: its Lease is renewed again`);
    await renew(node);
    if (needsReadyStatus(await core.readNode({ name: node.name }))) await postStatus(node);
  };

  for (const node of nodes) {
    const created = await core.createNode({ body: readyNode(node, new Date()) }).then(
      () => true,
      (error: unknown) => {
        if (!isConflict(error)) throw error;
        return false;
      },
    );
    // A node left from an earlier run gets its Ready status posted.
    if (!created) await postStatus(node);
    await renew(node);
  }
  const timer = setInterval(() => {
    for (const node of nodes) void beat(node).catch(() => {});
  }, options.renewEveryMs ?? 2000);
  log(`nodes ${nodes.map(n => n.name).join(", ")} kept Ready (status and Lease, as a kubelet)`);
  return { isCut, stop: () => clearInterval(timer) };
}
