import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  backoffWait,
  exponentialBackoff,
  jitter,
  stepBackoff,
  UNBOUNDED_STEPS,
  type Backoff,
  type Random,
} from "./backoff";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NEARLY_ONE = 1 - Number.EPSILON / 2; // the largest double below 1
const lowest: Random = () => 0;
const highest: Random = () => NEARLY_ONE;

/** pod-permission.md §2: {Duration: 2m, Factor: 2, Jitter: 1, Steps: 5, Cap: 1h}. */
const seed: Backoff = { durationMs: 2 * MINUTE, factor: 2, jitter: 1, steps: 5, capMs: HOUR };

function steps(backoff: Backoff, random: Random, count: number) {
  const rows: { waitMs: number; steps: number; durationAfterMs: number }[] = [];
  let current = backoff;
  for (let i = 0; i < count; i++) {
    const { waitMs, next } = stepBackoff(current, random);
    rows.push({ waitMs, steps: next.steps, durationAfterMs: next.durationMs });
    current = next;
  }
  return rows;
}

describe("stepBackoff: the table in pod-permission.md §2", () => {
  // [call, steps after, base returned, duration after]
  const table: [number, number, number, number][] = [
    [1, 4, 2 * MINUTE, 4 * MINUTE],
    [2, 3, 4 * MINUTE, 8 * MINUTE],
    [3, 2, 8 * MINUTE, 16 * MINUTE],
    [4, 1, 16 * MINUTE, 32 * MINUTE],
    [5, 0, 32 * MINUTE, HOUR], // 64m > 1h: capped, Steps = 0
    [6, 0, HOUR, HOUR],
    [7, 0, HOUR, HOUR],
  ];
  const low = steps(seed, lowest, table.length);
  const high = steps(seed, highest, table.length);
  for (const [call, stepsAfter, base, durationAfter] of table) {
    it(`given Step() call ${call}, returns a wait in [${base / MINUTE}m, ${(2 * base) / MINUTE}m), Steps ${stepsAfter}, Duration ${durationAfter / MINUTE}m after`, () => {
      const [l, h] = [low[call - 1], high[call - 1]];
      assert.deepEqual(l, { waitMs: base, steps: stepsAfter, durationAfterMs: durationAfter });
      assert.equal(h?.steps, stepsAfter);
      assert.equal(h?.durationAfterMs, durationAfter);
      // Go: d + Duration(0.999…×d) truncates to d + (d − 1 ns): just below twice the base.
      assert.equal(h?.waitMs, (2 * base * 1e6 - 1) / 1e6);
    });
  }

  it("given the capped backoff, returns waits up to twice the cap: jitter comes after capping", () => {
    const sixth = high[5];
    assert.ok(sixth !== undefined && sixth.waitMs > HOUR && sixth.waitMs < 2 * HOUR);
  });
});

describe("stepBackoff: edge cases", () => {
  const cases: [string, Backoff, number, Partial<Backoff>][] = [
    ["no jitter", { ...seed, jitter: 0 }, 2 * MINUTE, { durationMs: 4 * MINUTE, steps: 4 }],
    [
      "factor 0 (constant)",
      { ...seed, factor: 0 },
      2 * MINUTE,
      { durationMs: 2 * MINUTE, steps: 4 },
    ],
    [
      "no cap",
      { ...seed, steps: 10, capMs: 0, durationMs: HOUR },
      HOUR,
      { durationMs: 2 * HOUR, steps: 9 },
    ],
    ["negative steps", { ...seed, steps: -3 }, 2 * MINUTE, { durationMs: 2 * MINUTE, steps: 0 }],
    [
      "a cap equal to the next base",
      { ...seed, capMs: 4 * MINUTE },
      2 * MINUTE,
      { durationMs: 4 * MINUTE, steps: 4 },
    ],
    [
      "a fractional factor",
      { durationMs: 1000, factor: 1.6, jitter: 0, steps: 3, capMs: 120_000 },
      1000,
      { durationMs: 1600, steps: 2 },
    ],
  ];
  for (const [title, backoff, wait, next] of cases) {
    it(`given ${title}, returns a wait of ${wait} ms and ${JSON.stringify(next)}`, () => {
      const result = stepBackoff(backoff, lowest);
      assert.equal(result.waitMs, wait);
      assert.deepEqual(result.next, { ...backoff, ...next });
    });
  }

  it("given a backoff, returns a new one and leaves it unchanged", () => {
    const before = { ...seed };
    stepBackoff(seed, highest);
    assert.deepEqual(seed, before);
  });
});

describe("jitter", () => {
  const cases: [number, number, number, number][] = [
    [1000, 1, 0, 1000],
    [1000, 1, 0.5, 1500],
    [1000, 0.2, 0.5, 1100],
    [1000, 0, 0.5, 1500], // a factor ≤ 0 counts as 1, as in Go
    [1000, -1, 0.25, 1250],
  ];
  for (const [duration, factor, r, expected] of cases) {
    it(`given ${duration} ms, factor ${factor} and random ${r}, returns ${expected} ms`, () => {
      assert.equal(
        jitter(duration, factor, () => r),
        expected,
      );
    });
  }
});

describe("exponentialBackoff", () => {
  function recorder(results: boolean[]) {
    const sleeps: number[] = [];
    let calls = 0;
    return {
      sleeps,
      get calls() {
        return calls;
      },
      condition: () => results[calls++] ?? false,
      clock: { sleep: async (ms: number) => void sleeps.push(ms), random: lowest },
    };
  }

  it("given a condition that never holds, returns not done after Steps calls and Steps − 1 sleeps", async () => {
    const r = recorder([]);
    const outcome = await exponentialBackoff(seed, r.condition, r.clock);
    assert.equal(outcome.done, false);
    assert.equal(outcome.attempts, 5);
    assert.equal(r.calls, 5);
    assert.deepEqual(
      r.sleeps,
      [2, 4, 8, 16].map(m => m * MINUTE),
    ); // 30m in all; the cap is never reached
  });

  it("given a condition that holds on the third call, returns done after 2 sleeps", async () => {
    const r = recorder([false, false, true]);
    const outcome = await exponentialBackoff(seed, r.condition, r.clock);
    assert.deepEqual(
      { done: outcome.done, attempts: outcome.attempts },
      { done: true, attempts: 3 },
    );
    assert.deepEqual(r.sleeps, [2 * MINUTE, 4 * MINUTE]);
    assert.deepEqual(outcome.backoff, { ...seed, durationMs: 8 * MINUTE, steps: 3 });
  });

  it("given an async condition that holds at once, returns done without sleeping", async () => {
    const r = recorder([]);
    const outcome = await exponentialBackoff(seed, async () => true, r.clock);
    assert.deepEqual(
      { done: outcome.done, attempts: outcome.attempts },
      { done: true, attempts: 1 },
    );
    assert.deepEqual(r.sleeps, []);
  });

  it("given a cap reached early, returns after fewer attempts (Steps drops to 0), as Go does", async () => {
    const r = recorder([]);
    const outcome = await exponentialBackoff({ ...seed, capMs: 10 * MINUTE }, r.condition, r.clock);
    assert.equal(outcome.attempts, 3);
    assert.deepEqual(
      r.sleeps,
      [2, 4, 8].map(m => m * MINUTE),
    );
  });

  it("given zero steps, returns not done without calling the condition", async () => {
    const r = recorder([true]);
    const outcome = await exponentialBackoff({ ...seed, steps: 0 }, r.condition, r.clock);
    assert.deepEqual(
      { done: outcome.done, attempts: outcome.attempts, calls: r.calls },
      { done: false, attempts: 0, calls: 0 },
    );
  });

  it("given a condition that throws, returns the error to the caller and stops", async () => {
    const r = recorder([]);
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error("provider down");
    };
    await assert.rejects(exponentialBackoff(seed, failing, r.clock), /provider down/);
    assert.equal(calls, 1);
    assert.deepEqual(r.sleeps, []);
  });
});

describe("backoffWait", () => {
  const doubling: Backoff = {
    durationMs: 100,
    factor: 2,
    jitter: 0,
    steps: UNBOUNDED_STEPS,
    capMs: 800,
  };
  const cases: [number, number][] = [
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [9, 800],
    [10_000, 800],
  ];
  for (const [failures, expected] of cases) {
    it(`given failure ${failures} of a doubling backoff capped at 800 ms, returns ${expected}`, () =>
      assert.equal(
        backoffWait(doubling, failures, () => 0),
        expected,
      ));
  }
  it("equals the wait of the same number of stepBackoff calls, jitter included", () => {
    const jittered: Backoff = { durationMs: 250, factor: 2, jitter: 1, steps: 6, capMs: 5000 };
    for (let failures = 1; failures <= 8; failures++) {
      let current = jittered;
      let waitMs = 0;
      for (let step = 0; step < failures; step++) {
        ({ waitMs, next: current } = stepBackoff(current, () => 0.6));
      }
      assert.equal(
        backoffWait(jittered, failures, () => 0.6),
        waitMs,
        `failure ${failures}`,
      );
    }
  });
  it("given the largest random below 1 and jitter 1, stays below twice the capped base", () => {
    const wait = backoffWait(
      { durationMs: 250, factor: 2, jitter: 1, steps: UNBOUNDED_STEPS, capMs: 1000 },
      50,
      () => 1 - Number.EPSILON,
    );
    assert.ok(wait >= 1000 && wait < 2000, `wait ${wait}`);
  });
});
