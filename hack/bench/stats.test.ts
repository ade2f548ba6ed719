import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../../test/harness/generate";
import { differenceInterval, quantile } from "./stats";

/** `count` draws of a heavy-tailed latency: mostly 5–10 ms, one in 50 far slower. */
function latencies(count: number, random: () => number, shift = 0): number[] {
  return Array.from(
    { length: count },
    () => shift + (random() < 0.02 ? 20 + 40 * random() : 5 + 5 * random()),
  ).sort((x, y) => x - y);
}

describe("differenceInterval", () => {
  it("holds the true difference of two p99s, for the same distribution and a shifted one", () => {
    const random = seededRandom(7);
    const a = latencies(1000, random);
    const b = latencies(1000, random);
    const [low, high] = differenceInterval(a, b, 0.99);
    assert.ok(low <= 0 && 0 <= high, `${low}..${high} holds 0`);
    const shifted = latencies(1000, random, 3);
    const [shiftLow, shiftHigh] = differenceInterval(shifted, b, 0.99);
    assert.ok(shiftLow <= 3 && 3 <= shiftHigh, `${shiftLow}..${shiftHigh} holds 3`);
  });

  it("is narrow for a light tail and wide for a heavy one, and the same on every run", () => {
    const random = seededRandom(11);
    const light = Array.from({ length: 1000 }, () => 5 + random()).sort((x, y) => x - y);
    const lightOther = Array.from({ length: 1000 }, () => 5 + random()).sort((x, y) => x - y);
    const [lightLow, lightHigh] = differenceInterval(light, lightOther, 0.99);
    const heavy = latencies(1000, random);
    const heavyOther = latencies(1000, random);
    const [heavyLow, heavyHigh] = differenceInterval(heavy, heavyOther, 0.99);
    assert.ok(lightHigh - lightLow < 0.1, `light: ${lightLow}..${lightHigh}`);
    assert.ok(heavyHigh - heavyLow > 5, `heavy: ${heavyLow}..${heavyHigh}`);
    assert.deepEqual(differenceInterval(heavy, heavyOther, 0.99), [heavyLow, heavyHigh]);
  });

  it("quantile takes the nearest rank", () => {
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2);
    assert.equal(quantile([1, 2, 3, 4], 0.99), 4);
  });
});
