import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { loadGuardSettings } from "./settings";

describe("loadGuardSettings", () => {
  it("given nothing set, returns the documented defaults", () => {
    assert.deepEqual(loadGuardSettings({}), { resyncMs: 300_000, graceMs: 60_000, metricsPort: 0 });
  });
  it("given every variable, returns them", () => {
    assert.deepEqual(
      loadGuardSettings({
        BULWARK_GUARD_RESYNC_SECONDS: "15",
        BULWARK_CHECKSUM_GRACE_SECONDS: "0",
        BULWARK_METRICS_PORT: "9464",
      }),
      { resyncMs: 15_000, graceMs: 0, metricsPort: 9464 },
    );
  });
  for (const [name, value] of [
    ["BULWARK_GUARD_RESYNC_SECONDS", "5m"],
    ["BULWARK_GUARD_RESYNC_SECONDS", "0"],
    ["BULWARK_CHECKSUM_GRACE_SECONDS", "-1"],
    ["BULWARK_CHECKSUM_GRACE_SECONDS", "one"],
    ["BULWARK_METRICS_PORT", "70000"],
    ["BULWARK_METRICS_PORT", "http"],
  ] as const) {
    it(`given ${name}=${JSON.stringify(value)}, throws naming the variable`, () => {
      assert.throws(
        () => loadGuardSettings({ [name]: value }),
        new RegExp(`${name} must be an integer`),
      );
    });
  }
});
