// metav1.Condition bookkeeping, as meta.SetStatusCondition does it: lastTransitionTime moves only
// when the status changes.

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionChange = Omit<Condition, "lastTransitionTime">;

/** `conditions` with `next` set (replacing the one of its type), the others kept. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionChange,
  now: Date,
): Condition[] {
  const old = conditions?.find(c => c.type === next.type);
  const lastTransitionTime =
    old && old.status === next.status ? old.lastTransitionTime : now.toISOString();
  return [...(conditions ?? []).filter(c => c.type !== next.type), { ...next, lastTransitionTime }];
}
