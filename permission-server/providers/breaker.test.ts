import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProviderBreaker } from "./breaker";

function breaker() {
  const time = { now: 0 };
  return { time, b: new ProviderBreaker({ failures: 3, openMs: 1000, now: () => time.now }) };
}

describe("ProviderBreaker", () => {
  it("opens after the configured consecutive failures; a success in between resets the count", () => {
    const { b } = breaker();
    b.failure();
    b.failure();
    b.success();
    b.failure();
    b.failure();
    assert.equal(b.state, "closed");
    b.failure();
    assert.equal(b.state, "open");
    assert.equal(b.tryAcquire(), false);
  });

  it("lets exactly one probe through when half-open; its failure re-opens, its success closes", () => {
    const { b, time } = breaker();
    for (let i = 0; i < 3; i++) b.failure();
    time.now = 1000;
    assert.equal(b.state, "half-open");
    assert.equal(b.tryAcquire(), true);
    assert.equal(b.tryAcquire(), false, "one probe at a time");
    b.failure();
    assert.equal(b.state, "open");
    assert.equal(b.reopensAt, 2000);
    time.now = 2000;
    assert.equal(b.tryAcquire(), true);
    let closed = 0;
    b.onClose(() => closed++);
    b.success();
    assert.equal(b.state, "closed");
    assert.equal(closed, 1);
  });

  it("frees the probe slot when the probe ends without a verdict", () => {
    const { b, time } = breaker();
    for (let i = 0; i < 3; i++) b.failure();
    time.now = 1500;
    assert.equal(b.tryAcquire(), true);
    b.release();
    assert.equal(b.tryAcquire(), true);
  });
});
