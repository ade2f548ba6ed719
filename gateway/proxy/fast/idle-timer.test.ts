// The fast path's inactivity timer on node:test's mock timers (setTimeout and Date, the timer's
// clock here), so every deadline is exact and no test waits.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { COARSE_CLOCK, IdleTimer, type IdleClock } from "./idle-timer";

describe("IdleTimer", () => {
  let expiries: number[];
  let pending: number;
  let timer: IdleTimer;
  const exact: IdleClock = { noted: () => Date.now(), now: () => Date.now(), lagMs: 0 };

  beforeEach(() => {
    mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 });
    expiries = [];
    pending = 0;
    timer = new IdleTimer(
      () => expiries.push(Date.now()),
      () => pending,
      exact,
    );
  });
  afterEach(() => mock.timers.reset());

  it("expires when the timeout passes without activity, and not a millisecond before", () => {
    timer.set(1000);
    mock.timers.tick(999);
    assert.deepEqual(expiries, []);
    mock.timers.tick(1);
    assert.deepEqual(expiries, [1_001_000]);
  });

  it("counts from the last activity, however many there were, and fires once per period", () => {
    timer.set(1000);
    for (let i = 0; i < 50; i++) {
      mock.timers.tick(30);
      timer.touch();
    }
    // Last activity at +1500: due at +2500.
    mock.timers.tick(999);
    assert.deepEqual(expiries, []);
    mock.timers.tick(1);
    assert.deepEqual(expiries, [1_002_500]);
  });

  it("expires once, then again only after new activity (as a socket's timeout does)", () => {
    timer.set(100);
    mock.timers.tick(100);
    mock.timers.tick(400);
    assert.deepEqual(expiries, [1_000_100]);
    timer.touch();
    mock.timers.tick(100);
    assert.deepEqual(expiries, [1_000_100, 1_000_600]);
  });

  it("takes a shorter timeout at once, and a longer one from now", () => {
    timer.set(10_000);
    mock.timers.tick(100);
    timer.set(200);
    mock.timers.tick(200);
    assert.deepEqual(expiries, [1_000_300]);
    timer.set(100);
    mock.timers.tick(50);
    timer.set(5000);
    mock.timers.tick(4999);
    assert.deepEqual(expiries, [1_000_300]);
    mock.timers.tick(1);
    assert.deepEqual(expiries, [1_000_300, 1_005_350]);
  });

  it("stays quiet once set to 0 or stopped, whatever activity follows", () => {
    timer.set(100);
    timer.set(0);
    timer.touch();
    mock.timers.tick(1000);
    timer.set(100);
    timer.stop();
    timer.touch();
    mock.timers.tick(1000);
    assert.deepEqual(expiries, []);
  });

  it("takes a write queue that moves for activity, and one that does not for none", () => {
    timer.set(1000);
    pending = 64 * 1024;
    timer.queued(pending);
    mock.timers.tick(1000);
    // Nothing moved since the write stayed queued: the timeout stands.
    assert.deepEqual(expiries, [1_001_000]);
    timer.touch();
    timer.queued(pending);
    mock.timers.tick(500);
    pending = 32 * 1024;
    mock.timers.tick(500);
    // It moved: a new period from when the timer saw it.
    assert.deepEqual(expiries, [1_001_000]);
    mock.timers.tick(1000);
    assert.deepEqual(expiries, [1_001_000, 1_003_000]);
  });

  it("takes a queue already waiting when the timeout is set for no activity", () => {
    // The client's last answer still drains when keep-alive begins; nothing moves after.
    pending = 512 * 1024;
    timer.set(1000);
    mock.timers.tick(1000);
    assert.deepEqual(expiries, [1_001_000]);
  });
});

describe("IdleTimer on the shared coarse clock", () => {
  it("notes activity no later than it happens, so it never expires early", async () => {
    const timeoutMs = 150;
    let last = performance.now();
    let expiredAfter = -1;
    const done = new Promise<void>(resolve => {
      const timer = new IdleTimer(
        () => {
          expiredAfter = performance.now() - last;
          resolve();
        },
        () => 0,
      );
      timer.set(timeoutMs);
      // Activity every 40 ms for 400 ms: the timeout counts from the last of it.
      let touches = 0;
      const touching = setInterval(() => {
        timer.touch();
        last = performance.now();
        if (++touches === 10) clearInterval(touching);
      }, 40);
    });
    // The timer, as a socket's, does not hold the process open; this does until it expires.
    const keepAlive = setTimeout(() => undefined, 10_000);
    await done;
    clearTimeout(keepAlive);
    assert.ok(expiredAfter >= timeoutMs, `expired ${expiredAfter} ms after the last activity`);
    assert.ok(COARSE_CLOCK.noted() <= COARSE_CLOCK.now());
  });
});
