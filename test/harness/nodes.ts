// Fake edge nodes for the node-lifecycle controller: Node objects created Ready, and Leases in
// kube-node-lease renewed for the nodes that are "up". Stop renewing one and the controller marks
// it Unknown and taints it, as it would a node cut off from the cloud.
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
  type V1Node,
} from "@kubernetes/client-node";

export interface FakeNodes {
  /** Creates a Ready node with the zone label and starts renewing its Lease. */
  add(
    name: string,
    labels?: Record<string, string>,
    annotations?: Record<string, string>,
  ): Promise<V1Node>;
  /** Stops renewing the node's Lease: the cloud link is down. */
  cutOff(name: string): void;
  /** Renews the node's Lease again. */
  reconnect(name: string): void;
  /** Stops every renewal and deletes the nodes. */
  close(): Promise<void>;
}

export function fakeNodes(kc: KubeConfig, renewEveryMs = 1000): FakeNodes {
  const core = kc.makeApiClient(CoreV1Api);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const up = new Set<string>();
  const all = new Set<string>();
  // Lease times are MicroTime (six fractional digits), which client-node's Date serializer does
  // not write; server-side apply of a plain object does.
  const renew = async (name: string): Promise<void> => {
    const renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
    await objects.patch(
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: "kube-node-lease" },
        spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
      } as KubernetesObject,
      undefined,
      undefined,
      "bulwark-fake-kubelet",
      true,
      PatchStrategy.ServerSideApply,
    );
  };
  const timer = setInterval(() => {
    for (const name of up) void renew(name).catch(() => {});
  }, renewEveryMs);
  return {
    async add(name, labels = {}, annotations = {}) {
      const now = new Date();
      const node = await core.createNode({
        body: {
          metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels }, annotations },
          status: {
            conditions: [
              {
                type: "Ready",
                status: "True",
                reason: "KubeletReady",
                message: "fake",
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
          },
        },
      });
      all.add(name);
      up.add(name);
      await renew(name);
      return node;
    },
    cutOff: name => void up.delete(name),
    reconnect: name => void up.add(name),
    async close() {
      clearInterval(timer);
      up.clear();
      for (const name of all) await core.deleteNode({ name }).catch(() => {});
    },
  };
}
