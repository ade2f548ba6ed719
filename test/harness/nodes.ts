// Fake edge nodes for the node-lifecycle controller: Node objects created Ready, and Leases in
// kube-node-lease renewed for the nodes that are "up". Stop renewing one and the controller marks
// it Unknown and taints it, as it would a node cut off from the cloud.
import { voteAnnotations } from "../../core/edge";
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
  type V1Node,
} from "@kubernetes/client-node";
import { waitUntil } from "./wait";

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

/**
 * Waits until the node-lifecycle controller has seen each node Ready: the API server taints a new
 * node node.kubernetes.io/not-ready:NoSchedule, and the controller lifts that taint once it has
 * read the node's Ready condition. Cut off only after that, a node goes Unknown through the
 * controller's ordinary grace period.
 */
export async function seenReady(core: CoreV1Api, names: string[]): Promise<void> {
  await waitUntil(
    `the node-lifecycle controller to see ${names.join(", ")} Ready`,
    async () => {
      const nodes = await Promise.all(names.map(name => core.readNode({ name })));
      return nodes.every(n => !(n.spec?.taints ?? []).some(t => t.key === NOT_READY_TAINT));
    },
    30_000,
  );
}

const NOT_READY_TAINT = "node.kubernetes.io/not-ready";

/**
 * The annotations a daemon writes for a vote, with a term from now: long enough for one test by
 * default (the module refuses terms over 10 minutes).
 */
export function vote(value: "true" | "false", termMs = 9 * 60_000): Record<string, string> {
  const now = Date.now();
  return voteAnnotations(value, { decidedAtMs: now, validUntilMs: now + termMs });
}

/** A pod bound to `node` and given the kubelet's part of its status: running, an IP, readiness. */
export async function runningPod(
  core: CoreV1Api,
  pod: {
    namespace: string;
    name: string;
    node: string;
    ip: string;
    labels: Record<string, string>;
    ready: boolean;
  },
): Promise<void> {
  await core.createNamespacedPod({
    namespace: pod.namespace,
    body: {
      metadata: { name: pod.name, labels: pod.labels },
      spec: {
        nodeName: pod.node,
        containers: [
          { name: "app", image: "registry.example/app:1", ports: [{ containerPort: 80 }] },
        ],
      },
    },
  });
  const now = new Date().toISOString();
  const status = pod.ready ? "True" : "False";
  await core.patchNamespacedPodStatus({
    name: pod.name,
    namespace: pod.namespace,
    body: [
      {
        op: "replace",
        path: "/status",
        value: {
          phase: "Running",
          podIP: pod.ip,
          podIPs: [{ ip: pod.ip }],
          conditions: [
            { type: "Ready", status, lastTransitionTime: now },
            { type: "ContainersReady", status, lastTransitionTime: now },
          ],
        },
      },
    ],
  });
}
