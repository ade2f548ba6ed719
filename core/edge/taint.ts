// Removing the unreachable NoExecute taint, in admission (the taint list of the incoming object)
// and in the reconciler (a JSON Patch against the stored node).
//
// Only `node.kubernetes.io/unreachable:NoExecute` goes: it starts the pods' tolerationSeconds
// countdown. `unreachable:NoSchedule` stays so that no new pods land on a node nobody can reach,
// and `not-ready:NoExecute` (the kubelet itself said NotReady) is Kubernetes' business.
import {
  kubeTimeString,
  UNREACHABLE_TAINT_KEY,
  type JsonPatchOp,
  type Node,
  type Taint,
} from "./types";

function isUnreachableNoExecute(taint: Taint): boolean {
  return taint.key === UNREACHABLE_TAINT_KEY && taint.effect === "NoExecute";
}

/** `taints` without the unreachable NoExecute taint (every copy), the rest in order. */
export function stripUnreachableNoExecute<T extends Taint>(
  taints: readonly T[] | undefined,
): { taints: T[]; removed: boolean } {
  const kept = (taints ?? []).filter(t => !isUnreachableNoExecute(t));
  return { taints: kept, removed: kept.length !== (taints ?? []).length };
}

/** A taint as the API server stores it, so a `test` op compares equal (timeAdded in whole seconds). */
function storedTaint(taint: Taint): Taint {
  const { timeAdded, ...rest } = taint;
  return timeAdded === undefined ? rest : { ...rest, timeAdded: kubeTimeString(timeAdded) };
}

/**
 * The reconciler's JSON Patch removing the taint from `node` as it was read, or undefined when
 * there is nothing to remove. The whole array is replaced, not one index removed, and the patch
 * is guarded by `test` ops: the resourceVersion when known (any concurrent write fails the patch
 * with 422 and the reconciler re-reads), else the exact current taint list. A removal by index
 * without a guard could delete whichever taint has moved into that slot meanwhile.
 */
export function taintRemovalPatch(node: Node): JsonPatchOp[] | undefined {
  const current = node.spec?.taints;
  const { taints, removed } = stripUnreachableNoExecute(current);
  if (!removed) return undefined;
  const resourceVersion = node.metadata?.resourceVersion;
  const guard: JsonPatchOp =
    resourceVersion === undefined
      ? { op: "test", path: "/spec/taints", value: (current ?? []).map(storedTaint) }
      : { op: "test", path: "/metadata/resourceVersion", value: resourceVersion };
  return [guard, { op: "replace", path: "/spec/taints", value: taints.map(storedTaint) }];
}
