// The weighted score of one peer: each check plugin contributes 100 × its weight when it passes,
// and the peer is normal when the sum reaches the score line (SuperEdge's rule). Weights encode
// AND/OR: two checks of weight 0.5 must both pass to reach 100; two of weight 1 need either.
// Settings refuse a plugin set that can never reach the line (settings.ts), the misconfiguration
// behind SuperEdge #433, where every node scored 0 and was voted unhealthy.

export interface CheckOutcome {
  kind: string;
  weight: number;
  ok: boolean;
  /** Why it failed, for the debug view. */
  error?: string;
}

export function score(outcomes: readonly CheckOutcome[]): number {
  // Round away float noise (0.1 + 0.2) so that weights 0.3 + 0.7 reach exactly 100.
  const sum = outcomes.reduce((acc, o) => acc + (o.ok ? 100 * o.weight : 0), 0);
  return Math.round(sum * 1e6) / 1e6;
}

export function isNormal(outcomes: readonly CheckOutcome[], scoreLine: number): boolean {
  return score(outcomes) >= scoreLine;
}

/**
 * The checks whose pass/fail differs from the previous round (all failing ones on the first
 * round), and failing checks whose reason changed (a timeout that became a certificate refusal):
 * what the daemon logs, so each failure is reported once with its reason, not every period.
 */
export function checkChanges(
  previous: readonly CheckOutcome[] | undefined,
  current: readonly CheckOutcome[],
): CheckOutcome[] {
  return current.filter(o => {
    const before = previous?.find(p => p.kind === o.kind);
    if (before === undefined) return !o.ok;
    return before.ok !== o.ok || (!o.ok && before.error !== o.error);
  });
}
