import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, it } from "node:test";
import { FakeClock, flushPromises } from "./testkit";
import { limiterOptionsProblem, ProviderLimiter, type LimiterOptions } from "./limiter";
import { TransientProviderError } from "./types";

interface Trace {
  starts: number[];
  ends: number[];
  order: number[];
  results: Promise<unknown>[];
}

/** Queues `count` calls that each take `durationMs` of fake time; records when each ran. */
function queueCalls(
  limiter: ProviderLimiter,
  clock: FakeClock,
  count: number,
  durationMs = 0,
): Trace {
  const trace: Trace = { starts: [], ends: [], order: [], results: [] };
  for (let i = 0; i < count; i++) {
    const call = (): Promise<number> => {
      trace.starts.push(clock.now());
      trace.order.push(i);
      return new Promise(resolve => {
        clock.setTimeout(() => {
          trace.ends.push(clock.now());
          resolve(i);
        }, durationMs);
      });
    };
    trace.results.push(limiter.run(call));
  }
  return trace;
}

/** Most starts inside any half-open interval [t, t + windowMs). */
function peakIn(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[first] as number) <= (sorted[last] as number) - windowMs) first++;
    peak = Math.max(peak, last - first + 1);
  }
  return peak;
}

function limiter(options: Partial<LimiterOptions>, clock: FakeClock): ProviderLimiter {
  return new ProviderLimiter({ qps: 10, burst: 20, concurrency: 100, clock, ...options });
}

describe("ProviderLimiter", () => {
  it("given qps 10 and burst 20, never starts more than 10 calls in any second, from the first on", async () => {
    const clock = new FakeClock();
    const trace = queueCalls(limiter({}, clock), clock, 55);
    await clock.advance(10_000);
    assert.equal(trace.starts.length, 55);
    assert.equal(peakIn(trace.starts, 1000), 10);
    assert.equal(trace.starts.filter(t => t < 1000).length, 10);
    // Sustained: 55 calls need 5 full windows after the first.
    assert.equal(Math.max(...trace.starts), 5000);
  });

  it("given qps 10 and burst 2, starts 2 back to back and then one every 100 ms", async () => {
    const clock = new FakeClock();
    const trace = queueCalls(limiter({ burst: 2 }, clock), clock, 6);
    await clock.advance(1000);
    assert.deepEqual(trace.starts, [0, 0, 100, 200, 300, 400]);
  });

  it("given qps 0.5, starts one call every 2 seconds", async () => {
    const clock = new FakeClock();
    const trace = queueCalls(limiter({ qps: 0.5, burst: 5 }, clock), clock, 3);
    await clock.advance(10_000);
    assert.deepEqual(trace.starts, [0, 2000, 4000]);
  });

  it("given fractional qps 2.5, allows floor(qps) per second", async () => {
    const clock = new FakeClock();
    const trace = queueCalls(limiter({ qps: 2.5, burst: 10 }, clock), clock, 7);
    await clock.advance(10_000);
    assert.equal(trace.starts.length, 7);
    assert.equal(peakIn(trace.starts, 1000), 2);
  });

  it("counts a call in the window until a second after it ENDS, so slow calls cannot bunch at the backend", async () => {
    const clock = new FakeClock();
    const trace = queueCalls(limiter({ qps: 2, burst: 2 }, clock), clock, 4, 700);
    await clock.advance(10_000);
    // Two start at 0 and end at 700; the next two wait until 1700, not 1000.
    assert.deepEqual(trace.starts, [0, 0, 1700, 1700]);
    // Any request that arrives between a call's start and its end is a window apart from the
    // next window's requests: end of the first pair (700) + 1000 <= start of the second pair.
    assert.ok((trace.ends[1] as number) + 1000 <= (trace.starts[2] as number));
  });

  it("never runs more than `concurrency` calls at once, and starts them in FIFO order", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 1000, burst: 1000, concurrency: 3 }, clock);
    const trace = queueCalls(subject, clock, 10, 50);
    await flushPromises();
    assert.equal(subject.stats().running, 3);
    assert.equal(subject.stats().waiting, 7);
    await clock.advance(1000);
    assert.deepEqual(trace.order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(trace.starts, [0, 0, 0, 50, 50, 50, 100, 100, 100, 150]);
    assert.deepEqual(await Promise.all(trace.results), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("holds every start for Retry-After when a call fails with it", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 100, burst: 100 }, clock);
    const failing = subject.run(() =>
      Promise.reject(new TransientProviderError("429 from the backend", 3000)),
    );
    await assert.rejects(failing, TransientProviderError);
    const trace = queueCalls(subject, clock, 2);
    await clock.advance(2999);
    assert.deepEqual(trace.starts, []);
    await clock.advance(1);
    assert.deepEqual(trace.starts, [3000, 3000]);
  });

  it("given a waiter whose signal aborts, rejects it with the reason and lets the next one start", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 1, burst: 1 }, clock);
    const trace = queueCalls(subject, clock, 1);
    const controller = new AbortController();
    let ranAborted = false;
    const aborted = subject.run(async () => {
      ranAborted = true;
    }, controller.signal);
    const after = queueCalls(subject, clock, 1);
    await flushPromises();
    controller.abort(new Error("pod deleted"));
    await assert.rejects(aborted, /pod deleted/);
    await clock.advance(5000);
    assert.equal(ranAborted, false);
    assert.deepEqual(trace.starts, [0]);
    assert.deepEqual(after.starts, [1000]);
  });

  it("listens once to a signal many waiters share, and rejects them all when it aborts", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 1, burst: 1 }, clock);
    const controller = new AbortController();
    const runs = Array.from({ length: 30 }, (_, i) =>
      subject.run(() => Promise.resolve(i), controller.signal),
    );
    await flushPromises();
    assert.equal(getEventListeners(controller.signal, "abort").length, 1);
    assert.equal(await runs[0], 0);
    controller.abort(new Error("shutting down"));
    const outcomes = await Promise.allSettled(runs.slice(1));
    assert.ok(
      outcomes.every(o => o.status === "rejected" && /shutting down/.test(String(o.reason))),
    );
    assert.equal(getEventListeners(controller.signal, "abort").length, 0);
    assert.equal(subject.stats().waiting, 0);
  });

  it("given an already aborted signal, rejects at once without running", async () => {
    const clock = new FakeClock();
    const signal = AbortSignal.abort(new Error("stopping"));
    await assert.rejects(
      limiter({}, clock).run(() => Promise.resolve(1), signal),
      /stopping/,
    );
  });

  it("passes a call's result and error through and frees its slot either way", async () => {
    const clock = new FakeClock();
    const subject = limiter({ concurrency: 1 }, clock);
    await assert.rejects(
      subject.run(() => Promise.reject(new Error("boom"))),
      /boom/,
    );
    assert.equal(await subject.run(() => Promise.resolve("ok")), "ok");
    assert.equal(subject.stats().running, 0);
  });

  it("on close, rejects the waiters and later calls", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 1, burst: 1 }, clock);
    const first = subject.run(() => Promise.resolve(1));
    const second = subject.run(() => Promise.resolve(2));
    assert.equal(await first, 1);
    subject.close();
    await assert.rejects(second, /closed/);
    await assert.rejects(
      subject.run(() => Promise.resolve(3)),
      /closed/,
    );
  });

  it("reports its window and never counts more than windowLimit in it", async () => {
    const clock = new FakeClock();
    const subject = limiter({ qps: 5, burst: 50 }, clock);
    queueCalls(subject, clock, 23, 10);
    await clock.advance(20_000);
    const stats = subject.stats();
    assert.equal(stats.started, 23);
    assert.equal(stats.windowLimit, 5);
    assert.equal(stats.windowMs, 1000);
    assert.equal(stats.peakWindow, 5);
  });

  it("given bad options, names the field", () => {
    assert.match(limiterOptionsProblem({ qps: 0, burst: 1, concurrency: 1 }) ?? "", /^qps:/);
    assert.match(limiterOptionsProblem({ qps: 1, burst: 0.5, concurrency: 1 }) ?? "", /^burst:/);
    assert.match(
      limiterOptionsProblem({ qps: 1, burst: 1, concurrency: 0 }) ?? "",
      /^concurrency:/,
    );
    assert.throws(() => new ProviderLimiter({ qps: -1, burst: 1, concurrency: 1 }), /qps/);
  });
});
