import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isNormal, score } from "./score";

const o = (weight: number, ok: boolean) => ({ kind: "x", weight, ok });

describe("weighted score", () => {
  const cases: [string, ReturnType<typeof o>[], number, boolean][] = [
    ["one check of weight 1 passing", [o(1, true)], 100, true],
    ["one check of weight 1 failing", [o(1, false)], 0, false],
    ["AND: 0.5 + 0.5, both pass", [o(0.5, true), o(0.5, true)], 100, true],
    ["AND: 0.5 + 0.5, one fails", [o(0.5, true), o(0.5, false)], 50, false],
    ["OR: 1 + 1, one passes", [o(1, false), o(1, true)], 100, true],
    ["0.3 + 0.7 reaches exactly 100 (no float noise)", [o(0.3, true), o(0.7, true)], 100, true],
    ["no checks at all", [], 0, false],
  ];
  for (const [what, outcomes, expected, normal] of cases) {
    it(`${what}: ${expected}, ${normal ? "normal" : "not normal"}`, () => {
      assert.equal(score(outcomes), expected);
      assert.equal(isNormal(outcomes, 100), normal);
    });
  }
  it("honours another score line", () => {
    assert.equal(isNormal([o(0.5, true), o(0.5, false)], 50), true);
  });
});
