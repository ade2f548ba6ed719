// What to do about a pod that carries our finalizer: the revocation plan when it is being
// deleted, and the JSON Patch that removes only our finalizer entry.
import { annotationPath } from "../annotations/family";
import { PERMISSION_GRANT_ANNOTATION, POD_PERMISSION_FINALIZER } from "../names";
import { formatErrors } from "../result";
import { parseGrantRecord, type GrantRecord } from "./grant-record";
import type { PermissionPod } from "./pod";

export type JsonPatchOp =
  | { op: "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "add" | "replace"; path: string; value: unknown };

/**
 * The JSON Patch that removes our finalizer and nothing else: a `test` on each index guards
 * against a list that changed since it was read (kubelet and Job tracking keep updating
 * terminating pods), so a stale patch fails instead of removing someone else's finalizer.
 * Every occurrence is removed, highest index first so the lower indices stay valid.
 * Undefined when the finalizer is absent.
 */
export function finalizerRemovalPatch(
  finalizers: readonly string[] | undefined,
): JsonPatchOp[] | undefined {
  const indices = (finalizers ?? [])
    .map((finalizer, index) => (finalizer === POD_PERMISSION_FINALIZER ? index : -1))
    .filter(index => index >= 0)
    .reverse();
  if (indices.length === 0) return undefined;
  return indices.flatMap((index): JsonPatchOp[] => [
    { op: "test", path: `/metadata/finalizers/${index}`, value: POD_PERMISSION_FINALIZER },
    { op: "remove", path: `/metadata/finalizers/${index}` },
  ]);
}

export type RevocationPlan =
  /** Not ours to act on: not being deleted, or our finalizer is gone. */
  | { action: "none"; reason: string }
  /** Nothing was granted: remove the finalizer at once. */
  | { action: "release"; reason: string }
  /**
   * The grant record cannot be used (malformed, or another pod's): remove the finalizer and
   * emit a Warning. No retry can repair the record, and revoking by the current IP could take
   * the permission from a new pod that reuses it; the permission server's own grants, keyed by
   * pod UID, are the place to find what may be left.
   */
  | { action: "release-invalid-record"; reason: string }
  /** Revocation did not succeed within the deadline: remove the finalizer, Warning Event. */
  | { action: "force-release"; reason: string; record: GrantRecord }
  /** Revoke exactly this record's grants (its IP and UID), then remove the finalizer. */
  | { action: "revoke"; record: GrantRecord };

function deletionTime(value: string | Date): number {
  return value instanceof Date ? value.getTime() : Date.parse(value);
}

type RecordCheck = { usable: true; record: GrantRecord } | { usable: false; plan: RevocationPlan };

function checkRecord(pod: PermissionPod): RecordCheck {
  const parsed = parseGrantRecord(pod.metadata?.annotations?.[PERMISSION_GRANT_ANNOTATION]);
  if (!parsed.ok) {
    return {
      usable: false,
      plan: { action: "release-invalid-record", reason: formatErrors(parsed.errors) },
    };
  }
  const record = parsed.value;
  if (record === undefined) {
    return { usable: false, plan: { action: "release", reason: "never granted" } };
  }
  const uid = pod.metadata?.uid;
  if (uid !== undefined && record.uid !== uid) {
    const field = annotationPath(PERMISSION_GRANT_ANNOTATION);
    const reason = `${field}: records pod UID ${record.uid}, not this pod's ${uid} (copied from another pod?)`;
    return { usable: false, plan: { action: "release-invalid-record", reason } };
  }
  return { usable: true, record };
}

/**
 * The revocation step for a pod, from its own fields only. `deadlineMs` counts from the
 * deletionTimestamp (the end of the grace period the deleter asked for): after it the finalizer
 * is removed whatever happened, so no pod is stuck Terminating forever.
 */
export function revocationPlan(pod: PermissionPod, now: Date, deadlineMs: number): RevocationPlan {
  const deletion = pod.metadata?.deletionTimestamp;
  if (deletion === undefined) return { action: "none", reason: "not being deleted" };
  if (!(pod.metadata?.finalizers ?? []).includes(POD_PERMISSION_FINALIZER)) {
    return { action: "none", reason: `no ${POD_PERMISSION_FINALIZER} finalizer` };
  }
  const checked = checkRecord(pod);
  if (!checked.usable) return checked.plan;
  const { record } = checked;
  const overdueMs = now.getTime() - deletionTime(deletion) - deadlineMs;
  if (overdueMs > 0) {
    return {
      action: "force-release",
      record,
      reason: `grants to ${record.ip} (pod UID ${record.uid}) were not revoked within ${Math.round(deadlineMs / 1000)}s of the deletionTimestamp; removing the finalizer anyway: revoke them by hand`,
    };
  }
  return { action: "revoke", record };
}
