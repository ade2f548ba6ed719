import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  addressKey,
  ConnectionLimiter,
  nextExcess,
  RequestLimiter,
  requestRate,
} from "./rate-limit";

/** Which of the requests at these times (ms) pass. */
function run(limiter: RequestLimiter, times: number[], key: number | string = 1): boolean[] {
  return times.map(t => limiter.take(key, t));
}

describe("requestRate: nginx's units", () => {
  it("r/s and r/m in thousandths, integer division as ngx_http_limit_req_zone does", () => {
    assert.deepEqual(requestRate(1, "s", 5), { rate: 1000, burst: 5000 });
    assert.deepEqual(requestRate(10, "m", 50), { rate: 166, burst: 50_000 });
    assert.deepEqual(requestRate(60, "m", 0), { rate: 1000, burst: 0 });
  });

  it("divides rate and burst among workers", () => {
    assert.deepEqual(requestRate(10, "s", 50, 4), { rate: 2500, burst: 12_500 });
    assert.deepEqual(requestRate(1, "m", 5, 2), { rate: 8, burst: 2500 });
  });
});

describe("RequestLimiter: limit_req burst=… nodelay", () => {
  it("limit-rps 1 with the default multiplier 5: a fresh client gets 1 + 5 at once, then one a second", () => {
    const limiter = new RequestLimiter([requestRate(1, "s", 5)]);
    assert.deepEqual(run(limiter, [0, 0, 0, 0, 0, 0, 0, 0]), [
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    // excess is 5000 after the sixth; 999 ms leak 999, so still over; at 1000 one fits again.
    assert.deepEqual(run(limiter, [999, 1000, 1000]), [false, true, false]);
  });

  it("refused requests are not accounted", () => {
    const limiter = new RequestLimiter([requestRate(1, "s", 0)]);
    assert.deepEqual(run(limiter, [0, 500, 900, 1000]), [true, false, false, true]);
  });

  it("the excess never goes below 0: idling does not bank requests beyond the burst", () => {
    const limiter = new RequestLimiter([requestRate(2, "s", 2)]);
    assert.deepEqual(run(limiter, [0, 60_000, 60_000, 60_000, 60_000]), [
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it("r/m leaks with the truncated rate: 10r/m is 166 thousandths a second, so 6 s are not enough", () => {
    const limiter = new RequestLimiter([requestRate(10, "m", 0)]);
    // 166 * 6024 / 1000 = 999 (truncated): excess 1; at 6025 the leak is 1000.
    assert.deepEqual(run(limiter, [0, 6000, 6024, 6025]), [true, false, false, true]);
  });

  it("last moves only when time has passed, as `if (ms) lr->last = now`", () => {
    const rate = requestRate(1, "s", 3);
    assert.equal(nextExcess({ excess: 2000, last: 100 }, rate, 100), 3000);
    assert.equal(
      nextExcess({ excess: 2000, last: 100 }, rate, 50),
      3000,
      "a clock step back leaks nothing",
    );
    assert.equal(
      nextExcess({ excess: 2000, last: 100_000 }, rate, 0),
      2999,
      "a big step back counts as 1 ms",
    );
  });

  it("rps and rpm together: each checked, all accounted only when all pass", () => {
    const limiter = new RequestLimiter([requestRate(10, "s", 0), requestRate(2, "m", 0)]);
    assert.deepEqual(run(limiter, [0, 100]), [true, false]);
    // rps would pass at 100 but rpm refused: the rps bucket did not account that request.
    assert.deepEqual(run(limiter, [200]), [false]);
    // 2r/m is 33 thousandths a second: 30 s leak 990, 30.304 s leak 1000.
    assert.deepEqual(run(limiter, [30_000, 30_304]), [false, true]);
  });

  it("keys are separate", () => {
    const limiter = new RequestLimiter([requestRate(1, "s", 0)]);
    assert.deepEqual(
      [limiter.take(1, 0), limiter.take(2, 0), limiter.take(1, 0)],
      [true, true, false],
    );
  });
});

describe("RequestLimiter memory", () => {
  it("a flood of 1e6 distinct addresses keeps at most capacity buckets", () => {
    const limiter = new RequestLimiter([requestRate(1, "s", 0)], 10_000);
    for (let i = 0; i < 1_000_000; i++) limiter.take(i, i >> 10);
    assert.equal(limiter.size, 10_000);
  });

  it("a refused client that keeps trying stays limited through the flood", () => {
    const limiter = new RequestLimiter([requestRate(1, "m", 0)], 1000);
    const victim = -1;
    assert.equal(limiter.take(victim, 0), true);
    for (let i = 0; i < 1_000_000; i++) {
      limiter.take(i, 1);
      if (i % 500 === 0) assert.equal(limiter.take(victim, 1), false, `retry after ${i}`);
    }
    assert.equal(limiter.size, 1000);
  });

  it("only capacity/2 newer addresses evict an idle one", () => {
    const limiter = new RequestLimiter([requestRate(1, "m", 0)], 4);
    for (const key of ["a", "b", "c"]) limiter.take(key, 0);
    assert.equal(limiter.take("a", 1), false); // a is now among the newest
    limiter.take("d", 1); // b and c are the older generation; d drops it
    assert.equal(limiter.take("a", 2), false);
    assert.equal(limiter.take("d", 2), false);
    assert.equal(limiter.take("b", 2), true, "b was evicted: a fresh bucket");
    assert.ok(limiter.size <= 4);
  });
});

describe("ConnectionLimiter: limit_conn", () => {
  it("counts open requests per address and frees the slot on release", () => {
    const limiter = new ConnectionLimiter(2);
    assert.deepEqual(
      [limiter.acquire(1), limiter.acquire(1), limiter.acquire(1)],
      [true, true, false],
    );
    assert.equal(limiter.acquire(2), true);
    limiter.release(1);
    assert.equal(limiter.acquire(1), true);
    limiter.release(1);
    limiter.release(1);
    limiter.release(2);
    assert.equal(limiter.size, 0);
  });

  it("holds only addresses with open requests, at most capacity", () => {
    const limiter = new ConnectionLimiter(1, 100);
    for (let i = 0; i < 1_000_000; i++) {
      limiter.acquire(i);
      limiter.release(i);
    }
    assert.equal(limiter.size, 0);
    for (let i = 0; i < 200; i++) limiter.acquire(i);
    assert.equal(limiter.size, 100);
    assert.equal(limiter.acquire(1000), false, "a full zone refuses new addresses");
  });
});

describe("addressKey", () => {
  it("IPv4 as a number, IPv6 as a string, distinct", () => {
    assert.equal(addressKey(new Uint8Array([127, 0, 0, 2])), 0x7f000002);
    assert.equal(addressKey(new Uint8Array([255, 255, 255, 255])), 0xffffffff);
    const v6 = addressKey(new Uint8Array(16).fill(1));
    assert.equal(typeof v6, "string");
    assert.equal((v6 as string).length, 16);
  });
});
