import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readyCondition } from "./resource-status";

describe("readyCondition", () => {
  it("given no errors, returns Ready=True Valid", () => {
    assert.deepEqual(readyCondition([], 3), {
      type: "Ready",
      status: "True",
      reason: "Valid",
      message: "spec is valid",
      observedGeneration: 3,
    });
  });

  it("given errors, returns Ready=False InvalidSpec naming every field", () => {
    const condition = readyCondition(
      [
        { field: "spec.permissions[0].provider", message: 'provider "x" does not exist' },
        { field: "spec.address", message: "must be a URL" },
      ],
      1,
    );
    assert.equal(condition.status, "False");
    assert.equal(condition.reason, "InvalidSpec");
    assert.equal(
      condition.message,
      'spec.permissions[0].provider: provider "x" does not exist; spec.address: must be a URL',
    );
  });
});
