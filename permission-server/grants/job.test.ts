import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runGrantJob, retryWait, type Clock, type JobProgress, type ProviderHandle } from "./job";
import { JobSlots } from "./job-slots";
import { ProviderBreaker } from "../providers/breaker";
import {
  TransientProviderError,
  type GrantRequest,
  type GrantState,
  type Provider,
} from "../providers/types";

/** Time that moves only when the job sleeps. */
function fakeClock(): Clock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}

type Script = (call: "grant" | "poll", n: number, now: number) => GrantState | Error;

/** A provider that answers from a script, counting its calls. */
function scripted(script: Script, clock: { now(): number }): Provider & { calls: string[] } {
  const calls: string[] = [];
  const answer = async (call: "grant" | "poll"): Promise<GrantState> => {
    calls.push(call);
    const result = script(call, calls.length, clock.now());
    if (result instanceof Error) throw result;
    return result;
  };
  return {
    name: "scripted",
    calls,
    grant: () => answer("grant"),
    poll: () => answer("poll"),
    revoke: async () => {},
    close: async () => {},
  };
}

function handle(provider: Provider, clock: Clock, failures = 3, openMs = 5000): ProviderHandle {
  return {
    name: "authz",
    provider,
    breaker: new ProviderBreaker({ failures, openMs, now: () => clock.now() }),
    timeoutMs: 1000,
    slots: new JobSlots(4),
    schedule: call => call(),
  };
}

const REQUEST: GrantRequest = {
  podUid: "u1",
  namespace: "ns",
  pod: "p",
  ip: "10.0.0.1",
  group: "g",
  params: { resource: "orders", action: "read" },
};
const TIMING = {
  deadlineMs: 10_000,
  pollIntervalMs: 1000,
  retryIntervalMs: 100,
  retryMaxIntervalMs: 800,
};

async function run(h: ProviderHandle, clock: Clock, signal = new AbortController().signal) {
  const progress: JobProgress[] = [];
  const outcome = await runGrantJob(h, REQUEST, { timing: TIMING, clock, signal }, p =>
    progress.push(p),
  );
  return { outcome, progress };
}

describe("runGrantJob", () => {
  it("given a grant that is pending then granted, polls at the poll interval and returns granted", async () => {
    const clock = fakeClock();
    const provider = scripted(
      (call, n) => (n < 3 ? { state: "pending", jobId: "j1" } : { state: "granted", jobId: "j1" }),
      clock,
    );
    const { outcome, progress } = await run(handle(provider, clock), clock);
    assert.deepEqual(outcome, { outcome: "granted", jobId: "j1" });
    assert.deepEqual(provider.calls, ["grant", "poll", "poll"]);
    assert.equal(clock.t, 2000);
    assert.deepEqual(progress[0], { state: "pending", jobId: "j1" });
  });

  it("given a denial, returns it at once without retrying", async () => {
    const clock = fakeClock();
    const provider = scripted(() => ({ state: "denied", reason: "no such resource" }), clock);
    const { outcome } = await run(handle(provider, clock), clock);
    assert.deepEqual(outcome, { outcome: "denied", reason: "no such resource", jobId: undefined });
    assert.deepEqual(provider.calls, ["grant"]);
  });

  it("given transient failures below the breaker's threshold, retries with capped exponential waits", async () => {
    const clock = fakeClock();
    const provider = scripted(
      (_call, n) => (n <= 2 ? new TransientProviderError("503") : { state: "granted", jobId: "j" }),
      clock,
    );
    const { outcome, progress } = await run(handle(provider, clock, 5), clock);
    assert.equal(outcome.outcome, "granted");
    assert.equal(clock.t, 100 + 200);
    assert.deepEqual(progress[0], { state: "pending", jobId: undefined, reason: "503" });
  });

  it("honours Retry-After over its own wait", async () => {
    const clock = fakeClock();
    const provider = scripted(
      (_c, n) =>
        n === 1 ? new TransientProviderError("429", 700) : { state: "granted", jobId: "j" },
      clock,
    );
    await run(handle(provider, clock, 5), clock);
    assert.equal(clock.t, 700);
  });

  it("given an outage far longer than the deadline, waits for the provider uncounted and ends granted", async () => {
    const clock = fakeClock();
    const outageEnds = 60_000; // six deadlines
    const provider = scripted(
      (_c, _n, now) =>
        now < outageEnds
          ? new TransientProviderError("ECONNREFUSED")
          : { state: "granted", jobId: "j" },
      clock,
    );
    const { outcome, progress } = await run(handle(provider, clock, 3, 5000), clock);
    assert.equal(outcome.outcome, "granted");
    assert.ok(clock.t >= outageEnds);
    assert.ok(
      progress.some(p => p.state === "waiting"),
      "reported waiting for the provider",
    );
    // Probes while half-open: one call per open period, not a stream of retries.
    assert.ok(
      provider.calls.length <= 3 + Math.ceil(outageEnds / 5000) + 1,
      `${provider.calls.length} calls`,
    );
  });

  it("given a grant pending forever while the provider answers, times out after the deadline", async () => {
    const clock = fakeClock();
    const provider = scripted(() => ({ state: "pending", jobId: "j9" }), clock);
    const { outcome } = await run(handle(provider, clock), clock);
    assert.equal(outcome.outcome, "timeout");
    assert.match(
      (outcome as { reason: string }).reason,
      /not granted within 10000ms: still pending \(job j9\)/,
    );
    assert.equal(clock.t, TIMING.deadlineMs);
  });

  it("given a lost job, starts the grant again instead of polling it", async () => {
    const clock = fakeClock();
    const lost = Object.assign(new TransientProviderError("unknown job"), {
      name: "GrantLostError",
    });
    const provider = scripted((call, n) => {
      if (n === 1) return { state: "pending", jobId: "old" };
      if (n === 2) return lost;
      return call === "grant"
        ? { state: "pending", jobId: "new" }
        : { state: "granted", jobId: "new" };
    }, clock);
    const { outcome } = await run(handle(provider, clock, 5), clock);
    assert.deepEqual(provider.calls, ["grant", "poll", "grant", "poll"]);
    assert.deepEqual(outcome, { outcome: "granted", jobId: "new" });
  });

  it("given an aborted signal, stops", async () => {
    const clock = fakeClock();
    const abort = new AbortController();
    const provider = scripted(() => {
      abort.abort();
      return { state: "pending", jobId: "j" };
    }, clock);
    const { outcome } = await run(handle(provider, clock), clock, abort.signal);
    assert.deepEqual(outcome, { outcome: "aborted" });
  });
});

describe("retryWait", () => {
  const cases: [number, number][] = [
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [9, 800],
  ];
  for (const [retries, expected] of cases) {
    it(`given retry ${retries}, returns ${expected}`, () =>
      assert.equal(retryWait(TIMING, retries), expected));
  }
});

describe("JobSlots", () => {
  it("admits up to its size, then first come first served; an aborted waiter leaves the queue", async () => {
    const slots = new JobSlots(1);
    const never = new AbortController().signal;
    const first = await slots.acquire(never);
    const order: string[] = [];
    const aborted = new AbortController();
    const second = slots
      .acquire(aborted.signal)
      .then(r => (order.push(r ? "second" : "second aborted"), r));
    const third = slots.acquire(never).then(r => (order.push("third"), r));
    assert.equal(slots.waiting, 2);
    aborted.abort();
    first?.();
    first?.(); // a second release of the same slot is ignored
    (await third)?.();
    await second;
    assert.deepEqual(order, ["second aborted", "third"]);
    assert.equal(slots.waiting, 0);
    assert.ok(await slots.acquire(never), "the slot is free again");
  });
});
