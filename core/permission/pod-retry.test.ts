import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  afterFailure,
  afterReset,
  afterSuccess,
  gate,
  isEmptyEntry,
  parseEntry,
  serializeEntry,
  type PodEntry,
} from "./pod-retry";

const MIN = 60_000;
/** The defaults: wait.Backoff{Duration: 2m, Factor: 2, Jitter: 1, Steps: 5, Cap: 1h}. */
const DEFAULTS = { durationMs: 2 * MIN, factor: 2, jitter: 1, steps: 5, capMs: 60 * MIN };
const POD = { namespace: "shop", name: "web-1", ip: "10.0.0.7" };

/** `failures` failed attempts, each right when the previous backoff expired; the waits taken. */
function failRepeatedly(failures: number, random: () => number, threshold: number) {
  let entry: PodEntry = { breaker: { failures: 0 } };
  let now = new Date("2026-01-01T00:00:00Z");
  const waits: number[] = [];
  for (let i = 0; i < failures; i++) {
    entry = afterFailure(entry, {
      error: `boom ${i + 1}`,
      now,
      threshold,
      initial: DEFAULTS,
      random,
      pod: POD,
    });
    const next = Date.parse(entry.retry?.nextAttemptAt ?? "");
    waits.push((next - now.getTime()) / MIN);
    now = new Date(next);
  }
  return { entry, waits };
}

describe("per-pod backoff (k8s wait.Backoff semantics)", () => {
  it("given no jitter draw (random 0), waits exactly 2m, 4m, 8m, 16m, 32m, then the 1h cap", () => {
    const { waits } = failRepeatedly(8, () => 0, 100);
    assert.deepEqual(waits, [2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it("given the largest jitter draw, waits just under twice each base (jitter added after the cap)", () => {
    const { waits } = failRepeatedly(7, () => 0.999999, 100);
    const bases = [2, 4, 8, 16, 32, 60, 60];
    waits.forEach((wait, i) => {
      const base = bases[i] as number;
      assert.ok(
        wait >= base && wait < 2 * base,
        `wait ${i + 1}: ${wait} in [${base}, ${2 * base})`,
      );
    });
    assert.ok((waits[5] as number) > 60, "a capped base with jitter can exceed the cap");
  });

  it("records the last failure time and allows exactly one attempt once the backoff expires", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const entry = afterFailure(
      { breaker: { failures: 0 } },
      { error: "denied", now, threshold: 3, initial: DEFAULTS, random: () => 0, pod: POD },
    );
    assert.equal(entry.retry?.lastFailureAt, now.toISOString());
    const before = gate(entry, new Date(now.getTime() + 2 * MIN - 1));
    assert.equal(before.allow, false);
    assert.equal((before as { blocked: boolean }).blocked, false);
    assert.deepEqual(gate(entry, new Date(now.getTime() + 2 * MIN)), {
      allow: true,
      probe: false,
    });
  });

  it("opens the breaker at the third failure, blocking with the last error until the backoff elapses", () => {
    const { entry } = failRepeatedly(3, () => 0, 3);
    assert.equal(entry.breaker.failures, 3);
    assert.ok(entry.breaker.openedAt);
    // The third failure's backoff is 8 minutes: blocked until then, with the time said.
    const lastFailure = Date.parse(entry.retry!.lastFailureAt);
    const decision = gate(entry, new Date(lastFailure + 8 * MIN - 1));
    assert.ok(!decision.allow && decision.blocked);
    assert.match(decision.reason, /after 3 failed grants \(last: boom 3\); one more try at /);
    assert.equal(decision.retryAt?.getTime(), lastFailure + 8 * MIN);
    assert.deepEqual(gate(entry, new Date(lastFailure + 8 * MIN)), { allow: true, probe: true });
  });

  it("recovers by itself: a failed probe waits the next backoff step, a successful one closes it", () => {
    // The 168 h of a long outage: open after 3, then one probe per step, capped at 1 h.
    let { entry } = failRepeatedly(3, () => 0, 3);
    const waits: number[] = [];
    for (let probe = 0; probe < 5; probe++) {
      const at = new Date(entry.retry!.nextAttemptAt);
      assert.deepEqual(gate(entry, at), { allow: true, probe: true });
      entry = afterFailure(entry, {
        error: "outage",
        now: at,
        threshold: 3,
        initial: DEFAULTS,
        random: () => 0,
        pod: POD,
      });
      waits.push((Date.parse(entry.retry!.nextAttemptAt) - at.getTime()) / MIN);
      assert.ok(entry.breaker.openedAt, "a failed probe keeps it open");
    }
    assert.deepEqual(waits, [16, 32, 60, 60, 60]);
    const recovered = afterSuccess();
    assert.ok(isEmptyEntry(recovered), "closed, backoff reset");
    assert.deepEqual(gate(recovered, new Date()), { allow: true, probe: false });
  });

  it("success resets the backoff and the count, leaving nothing to store; so does a reset", () => {
    assert.ok(isEmptyEntry(afterSuccess()));
    assert.ok(isEmptyEntry(afterReset()));
  });

  it("round-trips through its ConfigMap value, breaker fields first", () => {
    const { entry } = failRepeatedly(2, () => 0.5, 3);
    const value = serializeEntry(entry);
    assert.deepEqual(parseEntry(value, "uid-1"), entry);
    assert.deepEqual(Object.keys(JSON.parse(value)), ["failures", "lastError", "pod", "retry"]);
  });

  it("given an unreadable value, returns undefined (the caller starts afresh)", () => {
    assert.equal(parseEntry("{not json", "uid-1"), undefined);
    assert.deepEqual(parseEntry(undefined, "uid-1"), { breaker: { failures: 0 } });
  });
});
