import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { setCondition, type Condition } from "./conditions";

const T0 = new Date("2026-01-01T00:00:00Z");
const T1 = new Date("2026-01-01T01:00:00Z");
const ready = { type: "Ready", status: "True", reason: "Valid", message: "ok" } as const;

describe("setCondition", () => {
  it("given no conditions, adds one stamped now", () => {
    assert.deepEqual(setCondition(undefined, ready, T0), [
      { ...ready, lastTransitionTime: T0.toISOString() },
    ]);
  });

  it("given the same status again, keeps lastTransitionTime and takes the new message", () => {
    const first = setCondition(undefined, ready, T0);
    const again = setCondition(first, { ...ready, message: "still ok" }, T1);
    assert.deepEqual(again, [
      { ...ready, message: "still ok", lastTransitionTime: T0.toISOString() },
    ]);
  });

  it("given a new status, moves lastTransitionTime and keeps other types", () => {
    const other: Condition = {
      type: "Synced",
      status: "True",
      reason: "R",
      message: "",
      lastTransitionTime: T0.toISOString(),
    };
    const next = setCondition(
      [other, ...setCondition(undefined, ready, T0)],
      { ...ready, status: "False", reason: "Invalid" },
      T1,
    );
    assert.deepEqual(next, [
      other,
      { ...ready, status: "False", reason: "Invalid", lastTransitionTime: T1.toISOString() },
    ]);
  });
});
