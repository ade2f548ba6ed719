// What a kubelet writes for its node, as pure functions: the Node object, the status it posts
// (Ready, addresses, capacity) and its Lease in kube-node-lease. The local stack's node keeper
// (nodes.ts) writes these for every node it runs, since no kubelet can run here.
import type { V1Node } from "@kubernetes/client-node";

export const NODE_LEASE_NAMESPACE = "kube-node-lease";
/** A kubelet's default: the node-lifecycle controller waits this long past the last renewal. */
export const LEASE_DURATION_SECONDS = 40;
/** The field manager of everything the keeper writes (shown in `kubectl get -o yaml`). */
export const KEEPER_MANAGER = "bulwark-local-kubelet";

export interface LocalNode {
  name: string;
  /** Its InternalIP: where its edge-health daemon listens, or this machine's own address. */
  address: string;
  labels: Record<string, string>;
}

/** Lease times are MicroTime (six fractional digits), which client-node's Date does not write. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export function nodeObject(node: LocalNode) {
  return {
    metadata: {
      name: node.name,
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        ...node.labels,
      },
    },
  } satisfies V1Node;
}

/** The status a kubelet posts: Ready with a fresh heartbeat, its address, room for pods. */
export function readyStatus(node: LocalNode, now: Date) {
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now.toISOString(),
    lastTransitionTime: now.toISOString(),
  });
  return {
    status: {
      conditions: [
        condition(
          "Ready",
          "True",
          "KubeletReady",
          "the local stack's node keeper is posting ready status",
        ),
        condition(
          "MemoryPressure",
          "False",
          "KubeletHasSufficientMemory",
          "stand-in: not measured",
        ),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "stand-in: not measured"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "stand-in: not measured"),
      ],
      addresses: [
        { type: "InternalIP", address: node.address },
        { type: "Hostname", address: node.name },
      ],
      capacity: { cpu: "4", memory: "8Gi", pods: "110" },
      allocatable: { cpu: "4", memory: "8Gi", pods: "110" },
    },
  };
}

/**
 * The Node as a kubelet registers it: with its Ready status in the create itself (the API server
 * keeps a Node's status on create). Created bare and then patched, a node is without a Ready
 * condition for a moment, and a controller manager that looks then sees every node not Ready and
 * enters master-disruption mode.
 */
export function readyNode(node: LocalNode, now: Date): V1Node {
  const { status } = readyStatus(node, now);
  const conditions = status.conditions.map(c => ({
    ...c,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  }));
  return { ...nodeObject(node), status: { ...status, conditions } };
}

/** True when the node's Ready condition is not "True": the kubelet posts its status again. */
export function needsReadyStatus(node: V1Node): boolean {
  const ready = node.status?.conditions?.find(c => c.type === "Ready");
  return ready?.status !== "True";
}

/** The node's Lease as a kubelet renews it, for server-side apply. */
export function nodeLease(name: string, now: Date) {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace: NODE_LEASE_NAMESPACE },
    spec: {
      holderIdentity: name,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      renewTime: microTime(now),
    },
  };
}
