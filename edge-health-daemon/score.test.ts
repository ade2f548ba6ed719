import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CheckOutcome, checkChanges, isNormal, score } from "./score";

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

describe("check changes worth a log line", () => {
  const ok = { kind: "kubelet", weight: 1, ok: true };
  const refused = { kind: "kubelet", weight: 1, ok: false, error: "connect ECONNREFUSED" };
  const tls = {
    kind: "kubelet",
    weight: 1,
    ok: false,
    error: "TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  };
  const cases: [string, CheckOutcome[] | undefined, CheckOutcome[], CheckOutcome[]][] = [
    ["first round, passing: nothing", undefined, [ok], []],
    ["first round, failing: the failure", undefined, [refused], [refused]],
    ["passing again: the recovery", [refused], [ok], [ok]],
    ["starts failing: the failure", [ok], [refused], [refused]],
    ["still failing for the same reason: nothing", [refused], [refused], []],
    ["still failing for another reason: the new reason", [refused], [tls], [tls]],
    ["still passing: nothing", [ok], [ok], []],
  ];
  for (const [what, previous, current, expected] of cases) {
    it(what, () => assert.deepEqual(checkChanges(previous, current), expected));
  }
});
