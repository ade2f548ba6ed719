// Whether a pod may be granted for its init client's call, from the API object alone (pure).
// Definitive problems (the pod is not one of Bulwark's, or not the caller) make the init client
// exit non-zero; transient ones (the IP not posted yet) make it retry.
import { PERMISSION_GROUP_ANNOTATION, POD_PERMISSION_FINALIZER } from "../../core/names";
import type { PermissionPod } from "../../core/permission";

export interface PodProblem {
  status: 403 | 409 | 412;
  definitive: boolean;
  reason: string;
}

type Pod = PermissionPod & { metadata?: { uid?: string } };

/** Not one of Bulwark's pods (or not grantable at all): the init client gives up. */
function definitiveProblem(pod: Pod, name: string): string | undefined {
  const metadata = pod.metadata ?? {};
  if (metadata.deletionTimestamp) return `pod ${name} is being deleted`;
  if (!metadata.annotations?.[PERMISSION_GROUP_ANNOTATION]) {
    return `pod ${name} has no ${PERMISSION_GROUP_ANNOTATION} annotation`;
  }
  if (!(metadata.finalizers ?? []).includes(POD_PERMISSION_FINALIZER)) {
    return `pod ${name} lacks the ${POD_PERMISSION_FINALIZER} finalizer, so its grants could never be revoked`;
  }
  if (pod.spec?.hostNetwork) return `pod ${name} uses hostNetwork: its IP is the node's`;
  return undefined;
}

/** Not ready yet: the init client retries. */
function transientProblem(pod: Pod, name: string, askedIp: string | undefined): string | undefined {
  const ip = pod.status?.podIP;
  if (!ip) return `pod ${name} has no IP assigned yet`;
  if (askedIp !== undefined && askedIp !== ip) {
    return `pod ${name} reports IP ${askedIp} but the API server has ${ip} (not updated yet?)`;
  }
  return undefined;
}

export function podProblem(pod: Pod, asked: { uid: string; ip?: string }): PodProblem | undefined {
  const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  if (pod.metadata?.uid !== asked.uid) {
    return {
      status: 403,
      definitive: true,
      reason: `pod ${name} has UID ${pod.metadata?.uid}, not ${asked.uid}`,
    };
  }
  const definitive = definitiveProblem(pod, name);
  if (definitive) return { status: 412, definitive: true, reason: definitive };
  const transient = transientProblem(pod, name, asked.ip);
  if (transient) return { status: 409, definitive: false, reason: transient };
  return undefined;
}
