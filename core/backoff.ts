// A port of k8s.io/apimachinery/pkg/util/wait's Backoff (Step, Jitter) and ExponentialBackoff,
// with the same semantics and randomness injected. The API speaks milliseconds (setTimeout's
// unit); the arithmetic runs on whole nanoseconds with Go's float64 operations and truncation
// (time.Duration), so a wait drawn with the largest random below 1 stays below 2 × the base.
/** wait.Backoff. Plain data, so a per-pod backoff can be stored and resumed after a restart. */
export interface Backoff {
  /** The base of the next step (Duration). */
  durationMs: number;
  /** Duration is multiplied by Factor after each step; 0 keeps it constant. */
  factor: number;
  /** Each step waits Duration plus up to Jitter × Duration; 0 or less adds none. */
  jitter: number;
  /** Steps left in which Duration grows; at 0 or below it stays as it is. */
  steps: number;
  /** The largest base; reaching it sets Steps to 0. 0 or less means no cap. */
  capMs: number;
}

/** A uniform random number in [0, 1), like Go's rand.Float64. */
export type Random = () => number;

const NS_PER_MS = 1e6;
const toNs = (ms: number): number => Math.round(ms * NS_PER_MS);
const toMs = (ns: number): number => ns / NS_PER_MS;

/** Go's `duration + time.Duration(rand.Float64()*maxFactor*float64(duration))`, in nanoseconds. */
function jitterNs(durationNs: number, maxFactor: number, random: Random): number {
  const factor = maxFactor <= 0 ? 1 : maxFactor;
  return durationNs + Math.trunc(random() * factor * durationNs);
}

/** wait.Jitter: `duration` plus up to `maxFactor` × `duration` (a factor ≤ 0 counts as 1). */
export function jitter(durationMs: number, maxFactor: number, random: Random): number {
  return toMs(jitterNs(toNs(durationMs), maxFactor, random));
}

/**
 * Backoff.Step: the wait for this attempt (the current base, jittered) and the backoff to use
 * next. The cap applies to the next base; jitter is added after capping, so a wait can exceed
 * the cap (up to 2 × Cap with Jitter 1).
 */
export function stepBackoff(backoff: Backoff, random: Random): { waitMs: number; next: Backoff } {
  const durationNs = toNs(backoff.durationMs);
  const waitMs = (): number =>
    toMs(backoff.jitter > 0 ? jitterNs(durationNs, backoff.jitter, random) : durationNs);
  if (backoff.steps < 1) return { waitMs: waitMs(), next: { ...backoff, steps: 0 } };
  let nextNs = durationNs;
  let steps = backoff.steps - 1;
  if (backoff.factor !== 0) {
    nextNs = Math.trunc(durationNs * backoff.factor);
    const capNs = toNs(backoff.capMs);
    if (capNs > 0 && nextNs > capNs) {
      nextNs = capNs;
      steps = 0;
    }
  }
  return { waitMs: waitMs(), next: { ...backoff, durationMs: toMs(nextNs), steps } };
}

/** Steps enough for any retry loop that runs until it succeeds (a cap ends the growth anyway). */
export const UNBOUNDED_STEPS = Number.MAX_SAFE_INTEGER;

/**
 * The wait before retry number `failures` (1-based) of a loop that starts from `backoff` and
 * steps once per failure: the same wait `stepBackoff` gives on the `failures`-th step, for callers
 * that count failures rather than keep the stepped state.
 */
export function backoffWait(backoff: Backoff, failures: number, random: Random): number {
  let current = backoff;
  for (let step = 1; step < failures; step++) {
    const { next } = stepBackoff(current, random);
    // Once the base stops growing, later steps wait the same: no need to walk them all.
    if (next.durationMs === current.durationMs && next.steps <= 0) break;
    current = next;
  }
  return stepBackoff(current, random).waitMs;
}

export interface RetryClock {
  sleep: (ms: number) => Promise<void>;
  random: Random;
}

export interface RetryOutcome {
  /** True when the condition returned true; false when the attempts ran out (ErrWaitTimeout). */
  done: boolean;
  attempts: number;
  /** The backoff after the last step, for a caller that keeps stepping it. */
  backoff: Backoff;
}

/**
 * wait.ExponentialBackoff: calls `condition` until it returns true, at most `backoff.steps`
 * times, sleeping `stepBackoff` between calls (so Steps − 1 sleeps, and none after the last
 * call). A cap reached on the way ends the attempts early, as in Go. A condition that throws
 * stops the loop and the error propagates, as Go returns the condition's error.
 */
export async function exponentialBackoff(
  backoff: Backoff,
  condition: () => boolean | Promise<boolean>,
  clock: RetryClock,
): Promise<RetryOutcome> {
  let current = backoff;
  let attempts = 0;
  while (current.steps > 0) {
    attempts++;
    if (await condition()) return { done: true, attempts, backoff: current };
    if (current.steps === 1) break;
    const { waitMs, next } = stepBackoff(current, clock.random);
    current = next;
    await clock.sleep(waitMs);
  }
  return { done: false, attempts, backoff: current };
}
