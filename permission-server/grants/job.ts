// One permission for one pod: start the provider's grant, then poll it to an end. Every call goes
// through the provider's limiter (rate and concurrency) and its breaker, under the provider's
// per-call timeout; transient failures are retried with capped exponential backoff (or the
// Retry-After the backend asked for) until the job's deadline. The deadline counts the time of
// failed calls and of the waits between polls and retries, never the time spent waiting for an
// open provider breaker: an outage of the authorization API makes jobs wait, not fail.
import {
  TransientProviderError,
  type GrantRequest,
  type GrantState,
  type Provider,
} from "../providers/types";
import { backoffWait, UNBOUNDED_STEPS, type Backoff } from "../../core/backoff";
import { errorText } from "../../kube/log";
import type { JobSlots } from "./job-slots";
import type { ProviderBreaker } from "../providers/breaker";

/** What the job needs of one provider: the backend, its breaker and its limiter. */
export interface ProviderHandle {
  readonly name: string;
  readonly provider: Provider;
  readonly breaker: ProviderBreaker;
  /** Per-call timeout (the PermissionProvider's timeoutSeconds), which the provider applies. */
  readonly timeoutMs: number;
  /** Jobs in flight for this provider (see job-slots.ts). */
  readonly slots: JobSlots;
  /** Runs `call` when the provider's rate and concurrency limits allow it. */
  schedule<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise(resolve => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    }),
};

export interface JobTiming {
  /** Callable time the job may use before it counts as a failure. */
  deadlineMs: number;
  pollIntervalMs: number;
  retryIntervalMs: number;
  retryMaxIntervalMs: number;
}

export type JobProgress =
  | { state: "pending"; jobId?: string; reason?: string }
  | { state: "waiting"; reason: string };

export type JobOutcome =
  | { outcome: "granted"; jobId: string }
  /** Definitive: counts against the pod's breaker. */
  | { outcome: "denied"; reason: string; jobId?: string }
  /** The deadline passed while the provider was callable: counts against the pod's breaker. */
  | { outcome: "timeout"; reason: string; jobId?: string }
  | { outcome: "aborted" };

/** One provider call, in its turn (the provider's limiter); the provider applies its per-call timeout. */
function call(
  handle: ProviderHandle,
  run: (signal: AbortSignal) => Promise<GrantState>,
  signal: AbortSignal,
): Promise<GrantState> {
  return handle.schedule(() => run(signal), signal);
}

interface Running {
  jobId?: string;
  lastError?: string;
  retries: number;
  /** Callable time used so far. */
  usedMs: number;
}

/**
 * Runs one permission's grant to an end. `onProgress` hears about pending jobs and provider
 * waits, for the pod's status annotation. Never throws for a provider's failure.
 */
export async function runGrantJob(
  handle: ProviderHandle,
  request: GrantRequest,
  options: { timing: JobTiming; clock: Clock; signal: AbortSignal },
  onProgress: (progress: JobProgress) => void,
): Promise<JobOutcome> {
  const { timing, clock, signal } = options;
  const running: Running = { retries: 0, usedMs: 0 };
  while (!signal.aborted) {
    if (running.usedMs >= timing.deadlineMs) return timedOut(running, timing);
    // A probe of a half-open breaker is the provider's test, not the pod's: its time is not counted.
    const probe = handle.breaker.state !== "closed";
    if (!handle.breaker.tryAcquire()) {
      await waitForProvider(handle, clock, signal, onProgress);
      continue;
    }
    const started = clock.now();
    const step = await callOnce(handle, request, running, signal);
    if (step.done) return step.outcome;
    // A failed call's time counts; an answered one's does not, since most of it may be the wait
    // for its turn in the provider's limiter (a big scale-up queues for minutes, and that is
    // the rate limit working, not the grant failing).
    if (!probe && step.kind === "retry") running.usedMs += clock.now() - started;
    onProgress(progressOf(running));
    if (step.kind === "retry") running.retries++;
    // The failure opened the breaker (or it was open): wait for the provider, uncounted.
    if (step.kind === "retry" && handle.breaker.state !== "closed") continue;
    await pause(step, running, { timing, clock, signal });
  }
  return { outcome: "aborted" };
}

function timedOut(running: Running, timing: JobTiming): JobOutcome {
  const why = running.lastError ?? `still pending (job ${running.jobId ?? "not started"})`;
  return {
    outcome: "timeout",
    reason: `not granted within ${timing.deadlineMs}ms: ${why}`,
    jobId: running.jobId,
  };
}

function progressOf(running: Running): JobProgress {
  return running.lastError
    ? { state: "pending", jobId: running.jobId, reason: running.lastError }
    : { state: "pending", jobId: running.jobId };
}

type Step =
  | { done: true; outcome: JobOutcome }
  | { done: false; kind: "poll" }
  | { done: false; kind: "retry"; retryAfterMs?: number };

async function callOnce(
  handle: ProviderHandle,
  request: GrantRequest,
  running: Running,
  signal: AbortSignal,
): Promise<Step> {
  const { jobId } = running;
  let state: GrantState;
  try {
    state = await call(
      handle,
      s => (jobId ? handle.provider.poll(request, jobId, s) : handle.provider.grant(request, s)),
      signal,
    );
  } catch (error) {
    if (signal.aborted) {
      handle.breaker.release();
      return { done: true, outcome: { outcome: "aborted" } };
    }
    handle.breaker.failure();
    running.lastError = errorText(error);
    // The backend lost the job (GrantLostError): start it again rather than poll it forever.
    if (error instanceof Error && error.name === "GrantLostError") running.jobId = undefined;
    const retryAfter = error instanceof TransientProviderError ? error.retryAfterMs : undefined;
    return { done: false, kind: "retry", retryAfterMs: retryAfter };
  }
  handle.breaker.success();
  running.lastError = undefined;
  running.retries = 0;
  if (state.state === "granted")
    return { done: true, outcome: { outcome: "granted", jobId: state.jobId } };
  if (state.state === "denied") {
    return { done: true, outcome: { outcome: "denied", reason: state.reason, jobId: state.jobId } };
  }
  running.jobId = state.jobId;
  return { done: false, kind: "poll" };
}

/** Sleeps until the next poll or retry, counting the time as used (the provider is up). */
async function pause(
  step: Exclude<Step, { done: true }>,
  running: Running,
  options: { timing: JobTiming; clock: Clock; signal: AbortSignal },
): Promise<void> {
  const { timing, clock, signal } = options;
  const wantMs =
    step.kind === "poll"
      ? timing.pollIntervalMs
      : (step.retryAfterMs ?? retryWait(timing, running.retries));
  const start = clock.now();
  await clock.sleep(Math.min(wantMs, Math.max(0, timing.deadlineMs - running.usedMs)), signal);
  running.usedMs += clock.now() - start;
}

/**
 * The wait before retry number `retries` (1-based): wait.Backoff doubling from the retry interval
 * up to its cap, without jitter, because the provider's limiter already spaces calls and the wait
 * counts against the permission's deadline, which status reports as time left.
 */
export function retryWait(timing: JobTiming, retries: number): number {
  const backoff: Backoff = {
    durationMs: timing.retryIntervalMs,
    factor: 2,
    jitter: 0,
    steps: UNBOUNDED_STEPS,
    capMs: timing.retryMaxIntervalMs,
  };
  return backoffWait(backoff, Math.max(1, retries), Math.random);
}

async function waitForProvider(
  handle: ProviderHandle,
  clock: Clock,
  signal: AbortSignal,
  onProgress: (progress: JobProgress) => void,
): Promise<void> {
  const reopensAt = handle.breaker.reopensAt ?? clock.now();
  const reason = `provider ${handle.name} is unavailable (breaker ${handle.breaker.state}); waiting, not counted against the pod`;
  onProgress({ state: "waiting", reason });
  const wake = new AbortController();
  const unsubscribe = handle.breaker.onClose(() => wake.abort());
  try {
    // Until the probe slot opens, or the breaker closes; at least a little, so a half-open
    // breaker whose probe is out is not polled in a busy loop.
    const ms = Math.max(reopensAt - clock.now(), 50);
    await clock.sleep(ms, AbortSignal.any([signal, wake.signal]));
  } finally {
    unsubscribe();
  }
}
