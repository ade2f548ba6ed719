// A pod's retry state, as kept in the breaker ConfigMap under its UID: the per-pod breaker
// (core/permission/breaker.ts) plus the per-pod backoff (core/backoff.ts, k8s
// wait.Backoff semantics) with the last failure time and when the one next attempt may run.
// Pure: the store reads and writes entries; these functions decide.
import { z } from "zod";
import {
  breakerGate,
  parseBreaker,
  recordFailure,
  recordSuccess,
  resetBreaker,
  serializeBreaker,
  type BreakerRecord,
} from "./breaker";
import { stepBackoff, type Backoff, type Random } from "../backoff";

const retrySchema = z.object({
  /** The backoff to step at the next failure (Step() already applied for the last one). */
  backoff: z.object({
    durationMs: z.number(),
    factor: z.number(),
    jitter: z.number(),
    steps: z.number(),
    capMs: z.number(),
  }),
  lastFailureAt: z.iso.datetime({ offset: true }),
  /** The one attempt allowed after the backoff may start from then on. */
  nextAttemptAt: z.iso.datetime({ offset: true }),
});
export type RetryState = z.infer<typeof retrySchema>;

export interface PodEntry {
  breaker: BreakerRecord;
  retry?: RetryState;
}

export const EMPTY_ENTRY: Readonly<PodEntry> = Object.freeze({ breaker: { failures: 0 } });

/** The entry's ConfigMap value: the breaker record's fields plus `retry`. */
export function serializeEntry(entry: PodEntry): string {
  const breaker = JSON.parse(serializeBreaker(entry.breaker)) as Record<string, unknown>;
  return JSON.stringify(entry.retry ? { ...breaker, retry: entry.retry } : breaker);
}

/** An entry from its value; a value that cannot be read counts as a fresh pod (and is logged by the caller). */
export function parseEntry(value: string | undefined, uid: string): PodEntry | undefined {
  if (value === undefined) return { breaker: { failures: 0 } };
  const breaker = parseBreaker(value, uid);
  if (!breaker.ok) return undefined;
  let retry: RetryState | undefined;
  try {
    const parsed = retrySchema.safeParse((JSON.parse(value) as { retry?: unknown }).retry);
    retry = parsed.success ? parsed.data : undefined;
  } catch {
    retry = undefined;
  }
  return retry ? { breaker: breaker.value, retry } : { breaker: breaker.value };
}

/** Whether the entry holds nothing worth keeping (closed, no failures): the key is removed. */
export function isEmptyEntry(entry: PodEntry): boolean {
  return entry.breaker.failures === 0 && entry.breaker.openedAt === undefined && !entry.retry;
}

export type Gate =
  | { allow: true; probe: boolean }
  /** Breaker open: the one next try runs at retryAt (none known: only a reset). */
  | { allow: false; blocked: true; retryAt?: Date; reason: string }
  | { allow: false; blocked: false; retryAt: Date; reason: string };

/**
 * May an attempt run now: once the backoff since the last failure has elapsed, also with the
 * breaker open (then it is the one probe that may close it: `probe`).
 */
export function gate(entry: PodEntry, now: Date): Gate {
  const breaker = breakerGate(entry.breaker);
  const next = entry.retry ? Date.parse(entry.retry.nextAttemptAt) : undefined;
  const waiting = next !== undefined && next > now.getTime();
  if (!breaker.allow) {
    if (next !== undefined && !waiting) return { allow: true, probe: true };
    const retryAt = next === undefined ? undefined : new Date(next);
    const when = retryAt ? `one more try at ${retryAt.toISOString()}` : "no try is scheduled";
    return { allow: false, blocked: true, retryAt, reason: `${breaker.reason}; ${when}` };
  }
  if (next !== undefined && waiting) {
    return {
      allow: false,
      blocked: false,
      retryAt: new Date(next),
      reason: `backing off after ${entry.breaker.failures} failed attempt(s) (last: ${entry.breaker.lastError ?? "unknown"})`,
    };
  }
  return { allow: true, probe: false };
}

export interface FailureContext {
  error: string;
  now: Date;
  threshold: number;
  /** The configured backoff, used for the first failure. */
  initial: Backoff;
  random: Random;
  pod: { namespace: string; name: string; ip?: string };
}

/** A counted failure: one more strike, and the backoff stepped from where it was. */
export function afterFailure(entry: PodEntry, context: FailureContext): PodEntry {
  const { error, now, threshold, initial, random, pod } = context;
  const breaker = { ...recordFailure(entry.breaker, error, now, threshold), pod };
  const { waitMs, next } = stepBackoff(entry.retry?.backoff ?? initial, random);
  return {
    breaker,
    retry: {
      backoff: next,
      lastFailureAt: now.toISOString(),
      nextAttemptAt: new Date(now.getTime() + waitMs).toISOString(),
    },
  };
}

/** Success closes the breaker and resets the backoff. */
export function afterSuccess(): PodEntry {
  return { breaker: recordSuccess() };
}

/** The operator's reset: breaker closed and backoff forgotten. */
export function afterReset(): PodEntry {
  return { breaker: resetBreaker() };
}
