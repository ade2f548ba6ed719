import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { paceDelayMs, paceSlice } from "./bandwidth";

const KIB = 1024;

describe("limit-rate schedule", () => {
  const bandwidth = { bytesPerSecond: 10 * KIB, after: 4 * KIB };

  it("lets limit-rate-after's bytes go at once", () => {
    assert.equal(paceDelayMs(bandwidth, 0, 1000, 1000), 0);
    assert.equal(paceDelayMs(bandwidth, 4 * KIB, 1000, 1000), 0);
  });

  it("makes the n-th paced byte due n / rate seconds after the response began", () => {
    // 5 KiB past limit-rate-after at 10 KiB/s: due 500 ms after the start.
    assert.equal(paceDelayMs(bandwidth, 9 * KIB, 1000, 1000), 500);
    assert.equal(paceDelayMs(bandwidth, 9 * KIB, 1000, 1400), 100);
    assert.equal(paceDelayMs(bandwidth, 9 * KIB, 1000, 1500), 0);
  });

  it("does not make up for lost time twice: late timers leave no debt", () => {
    // A second late, 10 KiB more may go at once; the 11th is due in 100 ms from the schedule.
    assert.equal(paceDelayMs(bandwidth, 14 * KIB, 0, 2000), 0);
    assert.equal(paceDelayMs(bandwidth, 25 * KIB, 0, 2000), 100);
  });

  it("rounds a wait up, so a byte never goes early", () => {
    assert.equal(paceDelayMs({ bytesPerSecond: 3, after: 0 }, 1, 0, 0), 334);
  });

  it("cuts paced bytes in tenths of a second, between 1 byte and 16 KiB", () => {
    assert.equal(paceSlice(bandwidth), 1024);
    assert.equal(paceSlice({ bytesPerSecond: 5, after: 0 }), 1);
    assert.equal(paceSlice({ bytesPerSecond: 1024 * KIB, after: 0 }), 16 * KIB);
  });
});
