import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EDGE_AUTONOMY_ANNOTATION, EDGE_MAX_UNKNOWN_ANNOTATION } from "../names";
import { autonomySchema } from "./autonomy";
import { autonomyCondition, REASONS } from "./autonomy-condition";
import { autonomyLimit, protectNode, type Decision } from "./decision";
import { MINUTE, T0, unknownNode } from "./testkit";

describe("the autonomy annotation", () => {
  const good: [string, unknown][] = [
    ["false", { optedOut: true }],
    ["true", { optedOut: false }],
    ["600s", { optedOut: false, limitSeconds: 600 }],
    ["90m", { optedOut: false, limitSeconds: 5400 }],
    ["1h30m", { optedOut: false, limitSeconds: 5400 }],
    ["24h", { optedOut: false, limitSeconds: 86_400 }],
    ["1h0m5s", { optedOut: false, limitSeconds: 3605 }],
    ["0s", { optedOut: false, limitSeconds: 0 }],
  ];
  for (const [text, expected] of good) {
    it(`given ${JSON.stringify(text)}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(autonomySchema.parse(text), expected);
    });
  }
  for (const text of [
    "",
    "True",
    "yes",
    "10",
    "-5m",
    "1.5h",
    "5m1h",
    "1d",
    " 10m",
    "8761h",
    "forever",
  ]) {
    it(`given ${JSON.stringify(text)}, returns an error`, () => {
      assert.equal(autonomySchema.safeParse(text).success, false);
    });
  }

  const node = (annotations: Record<string, string>) => ({ metadata: { annotations } });
  it("given both annotations, the autonomy one wins", () => {
    const limit = autonomyLimit({
      node: node({ [EDGE_AUTONOMY_ANNOTATION]: "2m", [EDGE_MAX_UNKNOWN_ANNOTATION]: "600" }),
      defaultMaxUnknownMs: 1000,
    });
    assert.deepEqual([limit.ms, limit.source], [120_000, `annotation ${EDGE_AUTONOMY_ANNOTATION}`]);
  });
  it('given autonomy "true", the older annotation still sets the limit', () => {
    const limit = autonomyLimit({
      node: node({ [EDGE_AUTONOMY_ANNOTATION]: "true", [EDGE_MAX_UNKNOWN_ANNOTATION]: "600" }),
      defaultMaxUnknownMs: 1000,
    });
    assert.equal(limit.ms, 600_000);
  });
  it("given a bad autonomy value, warns naming the annotation and falls back", () => {
    const limit = autonomyLimit({
      node: node({ [EDGE_AUTONOMY_ANNOTATION]: "forever" }),
      defaultMaxUnknownMs: 1000,
    });
    assert.equal(limit.ms, 1000);
    assert.match(
      limit.warnings[0] ?? "",
      /edge\.bulwark\.dev\/autonomy"\]: must be "true", "false"/,
    );
  });
  it('given autonomy "false" on a voted-healthy Unknown node, returns opted-out', () => {
    const base = unknownNode("edge", "true");
    const annotations = { ...base.metadata?.annotations, [EDGE_AUTONOMY_ANNOTATION]: "false" };
    const decision = protectNode({
      node: { ...base, metadata: { ...base.metadata, annotations } },
      now: new Date(T0 + MINUTE),
      defaultMaxUnknownMs: 60 * MINUTE,
    });
    assert.deepEqual([decision.protect, decision.rule], [false, "opted-out"]);
  });
});

describe("autonomyCondition", () => {
  const now = new Date("2026-12-04T15:00:00.123Z");
  const protectedNow: Decision = {
    protect: true,
    rule: "protected",
    reason: "voted healthy, Unknown for 5s of 600s (default)",
    warnings: [],
  };
  const stale: Decision = {
    protect: false,
    rule: "vote-stale",
    reason: "the vote is stale",
    warnings: [],
  };

  it("given no condition yet, returns one with the reason and the time now", () => {
    assert.deepEqual(autonomyCondition(protectedNow, undefined, now), {
      type: "EdgeAutonomy",
      status: "True",
      reason: "Voted",
      message: protectedNow.reason,
      lastTransitionTime: "2026-12-04T15:00:00Z",
    });
  });
  it("given the same status and reason with another message, returns nothing to write", () => {
    const previous = autonomyCondition(protectedNow, undefined, now);
    const later = { ...protectedNow, reason: "voted healthy, Unknown for 15s of 600s (default)" };
    assert.equal(autonomyCondition(later, previous, new Date(now.getTime() + 10_000)), undefined);
  });
  it("given protection ending, returns False with the new reason and a new transition time", () => {
    const previous = autonomyCondition(protectedNow, undefined, now);
    const next = autonomyCondition(stale, previous, new Date("2026-12-04T15:01:00Z"));
    assert.deepEqual(
      [next?.status, next?.reason, next?.lastTransitionTime],
      ["False", "Stale", "2026-12-04T15:01:00Z"],
    );
  });
  it("given a new reason with the same status, keeps the transition time", () => {
    const previous = autonomyCondition(stale, undefined, now);
    const next = autonomyCondition(
      { ...stale, rule: "over-limit", reason: "past the limit" },
      previous,
      new Date("2026-12-04T16:00:00Z"),
    );
    assert.deepEqual(
      [next?.reason, next?.lastTransitionTime],
      ["LimitReached", "2026-12-04T15:00:00Z"],
    );
  });
  it("gives every rule of the decision table a reason of its own", () => {
    const reasons = Object.values(REASONS);
    assert.equal(new Set(reasons).size, reasons.length);
  });
});
