// Which not-ready endpoint may be shown as ready again: shared by Endpoints and EndpointSlices.
//
// An address is promoted only when all hold:
// - it points at a Pod (targetRef) that the pod cache has, with the same uid (a pod re-created
//   under the same name is a different pod);
// - its node is in the node cache and protected (decision.ts);
// - the pod is not terminating and no container is in CrashLoopBackOff;
// - the pod was Ready when the node went Unknown. kube-controller-manager's MarkPodsNotReady sets
//   Ready=False with no reason, so the only evidence is time: a Ready=False whose
//   lastTransitionTime is at or after the node's Ready→Unknown transition was flipped by the
//   controller (the pod was ready before); an earlier one means the pod was already failing its
//   readiness probe, or still starting, and stays out. SuperEdge promoted every not-ready address.
import type { Decision } from "./decision";
import { nodeReady, timeMs, POD_READY, type Node, type ObjectRef, type Pod } from "./types";
import { namespacedName } from "../object-key";

export type PodLookup = (namespace: string, name: string) => Pod | undefined;
export type ProtectionLookup = (nodeName: string) => { node: Node; decision: Decision } | undefined;

export type Verdict =
  | { promote: true; nodeName: string; pod: string; reason: string }
  | { promote: false; reason: string };

/** Why `pod`'s Ready condition rules out "ready before the partition", or undefined. */
function readinessProblem(pod: Pod, node: Node): string | undefined {
  const ready = pod.status?.conditions?.find(c => c.type === POD_READY);
  // A Ready=True pod in notReadyAddresses is the caches disagreeing for a moment: it is ready.
  if (ready?.status === "True") return undefined;
  if (ready?.status !== "False") return "pod has no Ready=False condition to date";
  const podSince = timeMs(ready.lastTransitionTime);
  const nodeSince = timeMs(nodeReady(node)?.lastTransitionTime);
  if (podSince === undefined || nodeSince === undefined) {
    return "Ready transition times are missing, so readiness before the partition is unknown";
  }
  if (podSince < nodeSince) return "pod was already not ready before the node went Unknown";
  return undefined;
}

/** Why `pod` must not be promoted even on a protected `node`, or undefined when it may be. */
export function podIneligibility(pod: Pod, node: Node): string | undefined {
  if (pod.metadata?.deletionTimestamp !== undefined) return "pod is terminating";
  const crashing = pod.status?.containerStatuses?.some(
    s => s.state?.waiting?.reason === "CrashLoopBackOff",
  );
  if (crashing) return "a container is in CrashLoopBackOff";
  return readinessProblem(pod, node);
}

/** The pod an address points at, from the cache, or why there is none. */
function targetPod(options: {
  ref: ObjectRef | undefined;
  namespace: string | undefined;
  pod: PodLookup;
}): { pod: Pod; key: string } | { skip: string } {
  const { ref } = options;
  if (ref?.kind !== "Pod" || ref.name === undefined) return { skip: "no Pod targetRef" };
  const namespace = ref.namespace ?? options.namespace;
  if (namespace === undefined) return { skip: "no namespace for the pod" };
  const key = namespacedName(namespace, ref.name);
  const pod = options.pod(namespace, ref.name);
  if (pod === undefined) return { skip: `pod ${key} not found` };
  const uid = pod.metadata?.uid;
  if (ref.uid !== undefined && uid !== undefined && ref.uid !== uid) {
    return { skip: `pod ${key} was re-created (uid differs)` };
  }
  return { pod, key };
}

function resolveNode(address: { nodeName?: string }, pod: Pod): string | { skip: string } {
  const podNode = pod.spec?.nodeName;
  if (address.nodeName !== undefined && podNode !== undefined && address.nodeName !== podNode) {
    return { skip: `address says node ${address.nodeName}, pod runs on ${podNode}` };
  }
  return address.nodeName ?? podNode ?? { skip: "no node name on the address or the pod" };
}

/** The verdict on one not-ready address (or slice endpoint). */
export function promotionVerdict(options: {
  address: { nodeName?: string; targetRef?: ObjectRef };
  namespace: string | undefined;
  pod: PodLookup;
  protection: ProtectionLookup;
}): Verdict {
  const target = targetPod({
    ref: options.address.targetRef,
    namespace: options.namespace,
    pod: options.pod,
  });
  if ("skip" in target) return { promote: false, reason: target.skip };
  const { pod, key: podKey } = target;
  const nodeName = resolveNode(options.address, pod);
  if (typeof nodeName !== "string") return { promote: false, reason: nodeName.skip };
  const protection = options.protection(nodeName);
  if (protection === undefined)
    return { promote: false, reason: `node ${nodeName} not in the cache` };
  if (!protection.decision.protect) {
    return {
      promote: false,
      reason: `node ${nodeName} not protected: ${protection.decision.reason}`,
    };
  }
  const ineligible = podIneligibility(pod, protection.node);
  if (ineligible !== undefined) return { promote: false, reason: `pod ${podKey}: ${ineligible}` };
  return {
    promote: true,
    nodeName,
    pod: podKey,
    reason: `node ${nodeName} ${protection.decision.reason}`,
  };
}

/** What promotion reads of a pod: every pod in the cluster is cached (capabilities/pepr/watches.ts clusterPods), so only this. */
export function slimPod(pod: Pod): Pod {
  return {
    metadata: {
      name: pod.metadata?.name,
      namespace: pod.metadata?.namespace,
      uid: pod.metadata?.uid,
      deletionTimestamp: pod.metadata?.deletionTimestamp,
    },
    spec: { nodeName: pod.spec?.nodeName },
    status: {
      conditions: pod.status?.conditions?.filter(c => c.type === "Ready"),
      containerStatuses: pod.status?.containerStatuses?.map(c => ({
        state: { waiting: { reason: c.state?.waiting?.reason } },
      })),
    },
  };
}
