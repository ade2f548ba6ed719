// The per-provider limiter every provider call runs through: a concurrency limit, a token bucket
// and a sliding one-second window, with one FIFO queue in front of them.
//
// The guarantee (what a benchmark may check), with n = max(1, floor(qps)) and W = 1000 ms when
// qps >= 1, or n = 1 and W = 1000 / qps ms when qps < 1:
//
//   1. Peak: in every half-open interval [t, t + W) the backend RECEIVES at most n requests, as
//      long as each call sends its request(s) before it ends (true of the http and mysql
//      providers: each call is one request, or one connection). This holds at the backend, not
//      only at the caller, whatever the network delay: a call counts in the window from its
//      start until W after its END, so two calls that may both arrive inside one window cannot
//      both have started. With qps >= 1 the peak QPS the backend sees is therefore <= floor(qps),
//      from the very first second on (the limiter never starts with a full second's allowance).
//   2. Sustained: over any interval of length T at most n * ceil(T / W) calls start, so the long
//      run rate is <= qps (exactly qps when qps is an integer and calls are short).
//   3. Burst: at most c = min(burst, n) calls start back to back; beyond that the token bucket
//      (capacity c, refilled at qps per second, full at start) spaces them 1/qps s apart, so any
//      interval of length T has at most c + qps * T starts. burst > qps therefore buys nothing
//      over burst = qps: the one-second window is the stronger limit.
//   4. Concurrency: at most `concurrency` calls run at once.
//   5. Order: calls start in the order they asked (FIFO); a waiter that is aborted leaves the
//      queue and never starts; nobody overtakes the head of the queue.
//   6. Retry-After: a call that fails with TransientProviderError carrying retryAfterMs holds
//      every later start until that much time has passed after it ended.
//
// With several permission-server replicas, each has its own limiter: build them with
// `share = 1 / replicas` (see registry.ts) so that the replicas together stay within the limit.
import { TransientProviderError } from "./types";

/** Time and timers, injectable so tests can drive the limiter with a fake clock. */
export interface LimiterClock {
  /** Milliseconds, monotonic. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: LimiterClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: handle => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LimiterOptions {
  /** Calls per second, > 0. */
  qps: number;
  /** Calls allowed back to back, >= 1 (capped at the window's n; see the guarantee above). */
  burst: number;
  /** Calls in flight at once, >= 1. */
  concurrency: number;
  clock?: LimiterClock;
}

/** Numbers for metrics and benchmarks. */
export interface LimiterStats {
  running: number;
  waiting: number;
  started: number;
  /** The window's size: at most `windowLimit` calls per `windowMs`. */
  windowLimit: number;
  windowMs: number;
  /** Most calls ever counted in one window at a start: never above windowLimit. */
  peakWindow: number;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
}

/** Why `options` cannot build a limiter (naming the field), or undefined. */
export function limiterOptionsProblem(options: LimiterOptions): string | undefined {
  if (!(options.qps > 0) || !Number.isFinite(options.qps)) {
    return `qps: must be a number > 0; got ${options.qps}`;
  }
  if (!Number.isInteger(options.burst) || options.burst < 1) {
    return `burst: must be an integer >= 1; got ${options.burst}`;
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    return `concurrency: must be an integer >= 1; got ${options.concurrency}`;
  }
  return undefined;
}

// Token arithmetic in floating point: a token this close to whole counts as whole.
const EPSILON = 1e-9;

export class ProviderLimiter {
  readonly qps: number;
  readonly concurrency: number;
  readonly windowLimit: number;
  readonly windowMs: number;
  readonly bucketSize: number;
  private readonly clock: LimiterClock;
  private readonly queue: Waiter[] = [];
  /** Waiters by signal: one abort listener per signal, however many calls share it. */
  private readonly bySignal = new Map<AbortSignal, { waiters: Set<Waiter>; onAbort(): void }>();
  /** End times of finished calls still inside the window, oldest first. */
  private readonly ended: number[] = [];
  private running = 0;
  private started = 0;
  private peakWindow = 0;
  private tokens: number;
  private refilledAt: number;
  private holdUntil = -Infinity;
  private timer: unknown;
  private closed = false;

  constructor(options: LimiterOptions) {
    const problem = limiterOptionsProblem(options);
    if (problem) throw new RangeError(`limiter ${problem}`);
    this.clock = options.clock ?? systemClock;
    this.qps = options.qps;
    this.concurrency = options.concurrency;
    this.windowLimit = Math.max(1, Math.floor(options.qps));
    this.windowMs = options.qps >= 1 ? 1000 : 1000 / options.qps;
    this.bucketSize = Math.min(options.burst, this.windowLimit);
    this.tokens = this.bucketSize;
    this.refilledAt = this.clock.now();
  }

  /**
   * Waits for its turn, then runs `call`. Rejects with `signal.reason` if `signal` aborts while
   * waiting (the call then never runs); once started, `call` itself must honour the signal.
   */
  async run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await call();
    } catch (error) {
      if (error instanceof TransientProviderError && error.retryAfterMs !== undefined) {
        this.holdUntil = Math.max(this.holdUntil, this.clock.now() + error.retryAfterMs);
      }
      throw error;
    } finally {
      this.release();
    }
  }

  stats(): LimiterStats {
    return {
      running: this.running,
      waiting: this.queue.length,
      started: this.started,
      windowLimit: this.windowLimit,
      windowMs: this.windowMs,
      peakWindow: this.peakWindow,
    };
  }

  /** Rejects every waiter; calls already running finish. Later `run` calls reject at once. */
  close(): void {
    this.closed = true;
    this.clearTimer();
    for (const waiter of this.queue.splice(0)) {
      this.forget(waiter);
      waiter.reject(new Error("the provider limiter is closed"));
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the provider limiter is closed"));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) this.watch(signal).add(waiter);
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** The waiters of `signal`, listening to it once. */
  private watch(signal: AbortSignal): Set<Waiter> {
    const existing = this.bySignal.get(signal);
    if (existing) return existing.waiters;
    const entry = {
      waiters: new Set<Waiter>(),
      onAbort: () => {
        this.bySignal.delete(signal);
        for (const waiter of entry.waiters) {
          const index = this.queue.indexOf(waiter);
          if (index >= 0) this.queue.splice(index, 1);
          waiter.reject(signal.reason);
        }
        this.pump();
      },
    };
    this.bySignal.set(signal, entry);
    signal.addEventListener("abort", entry.onAbort, { once: true });
    return entry.waiters;
  }

  /** Stops watching a waiter's signal for it (it started, or the limiter closed). */
  private forget(waiter: Waiter): void {
    if (!waiter.signal) return;
    const entry = this.bySignal.get(waiter.signal);
    if (!entry) return;
    entry.waiters.delete(waiter);
    if (entry.waiters.size === 0) {
      this.bySignal.delete(waiter.signal);
      waiter.signal.removeEventListener("abort", entry.onAbort);
    }
  }

  private release(): void {
    this.running--;
    this.ended.push(this.clock.now());
    this.pump();
  }

  /** Starts waiters from the head while everything allows it, else sets one timer. */
  private pump(): void {
    this.clearTimer();
    while (this.queue.length > 0) {
      const wait = this.waitMs();
      if (wait === "release") return; // the next release pumps again
      if (wait > 0) {
        this.timer = this.clock.setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, Math.ceil(wait));
        return;
      }
      this.start(this.queue.shift() as Waiter);
    }
  }

  /** 0 when the head may start now, else how long to wait, or "release" for a slot to free. */
  private waitMs(): number | "release" {
    if (this.running >= this.concurrency) return "release";
    const now = this.clock.now();
    while (this.ended.length > 0 && (this.ended[0] as number) <= now - this.windowMs) {
      this.ended.shift();
    }
    let wait = Math.max(0, this.holdUntil - now);
    if (this.running + this.ended.length >= this.windowLimit) {
      // Full window: the oldest end leaving it frees a place; with none ended, a release must.
      if (this.ended.length === 0) return "release";
      wait = Math.max(wait, (this.ended[0] as number) + this.windowMs - now);
    }
    this.refill(now);
    if (this.tokens < 1 - EPSILON) {
      wait = Math.max(wait, ((1 - this.tokens) * 1000) / this.qps);
    }
    return wait;
  }

  private refill(now: number): void {
    const earned = ((now - this.refilledAt) * this.qps) / 1000;
    this.tokens = Math.min(this.bucketSize, this.tokens + earned);
    this.refilledAt = now;
  }

  private start(waiter: Waiter): void {
    this.forget(waiter);
    this.tokens = Math.max(0, this.tokens - 1);
    this.running++;
    this.started++;
    this.peakWindow = Math.max(this.peakWindow, this.running + this.ended.length);
    waiter.resolve();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
