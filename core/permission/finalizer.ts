// What to do about a pod that carries our finalizer: the revocation plan when it is being
// deleted (core/json-patch.ts removes the finalizer).
import { POD_PERMISSION_FINALIZER } from "../names";
import type { PermissionPod } from "./pod";

export type RevocationPlan =
  /** Not ours to act on: not being deleted, or our finalizer is gone. */
  | { action: "none"; reason: string }
  /** The pod never had an IP, so nothing can have been granted: remove the finalizer at once. */
  | { action: "release"; reason: string }
  /**
   * The permission server did not confirm the revocation within the deadline: remove the
   * finalizer, Warning Event. Its ledger still holds the grants, and its sweep revokes them once
   * it can, so nothing is left behind for good.
   */
  | { action: "force-release"; reason: string }
  /**
   * Ask the permission server to revoke what its ledger holds for this pod UID (its own record,
   * never the pod's annotations, which whoever may patch the pod can edit), then remove the
   * finalizer.
   */
  | { action: "revoke" };

function deletionTime(value: string | Date): number {
  return value instanceof Date ? value.getTime() : Date.parse(value);
}

/**
 * The revocation step for a pod. `deadlineMs` counts from the deletionTimestamp (the end of the
 * grace period the deleter asked for): after it the finalizer is removed whatever happened, so no
 * pod is stuck Terminating forever.
 */
export function revocationPlan(pod: PermissionPod, now: Date, deadlineMs: number): RevocationPlan {
  const deletion = pod.metadata?.deletionTimestamp;
  if (deletion === undefined) return { action: "none", reason: "not being deleted" };
  if (!(pod.metadata?.finalizers ?? []).includes(POD_PERMISSION_FINALIZER)) {
    return { action: "none", reason: `no ${POD_PERMISSION_FINALIZER} finalizer` };
  }
  // Grants go to status.podIP only, which kubelet sets: without one, nothing was granted.
  if (!pod.status?.podIP) return { action: "release", reason: "never had an IP: nothing granted" };
  const overdueMs = now.getTime() - deletionTime(deletion) - deadlineMs;
  if (overdueMs > 0) {
    return {
      action: "force-release",
      reason: `the permission server did not confirm revoking pod UID ${pod.metadata?.uid ?? "?"}'s grants within ${Math.round(deadlineMs / 1000)}s of the deletionTimestamp; removing the finalizer anyway (the server's sweep revokes what its ledger still holds)`,
    };
  }
  return { action: "revoke" };
}
