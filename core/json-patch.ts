// RFC 6902 JSON Patch, as Bulwark sends it to the API server and admission responses carry it.

export type JsonPatchOp =
  | { op: "test" | "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/**
 * The JSON Patch that removes `finalizer` and nothing else: every occurrence, highest index first
 * so the lower indices stay valid, each guarded by a `test` of its index, so a list that changed
 * since it was read (kubelet and Job tracking keep updating terminating pods) is refused (422)
 * instead of losing someone else's finalizer. Undefined when the finalizer is absent.
 */
export function finalizerRemovalPatch(
  finalizers: readonly string[] | undefined,
  finalizer: string,
): JsonPatchOp[] | undefined {
  const indices = (finalizers ?? [])
    .map((name, index) => (name === finalizer ? index : -1))
    .filter(index => index >= 0)
    .reverse();
  if (indices.length === 0) return undefined;
  return indices.flatMap((index): JsonPatchOp[] => [
    { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
    { op: "remove", path: `/metadata/finalizers/${index}` },
  ]);
}
