import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { loadSettings } from "./settings";

describe("pod-permission loadSettings: timings", () => {
  it("given nothing set, returns the documented defaults", () => {
    const settings = loadSettings({});
    assert.deepEqual(
      [settings.revokeDeadlineMs, settings.sweepMs, settings.revokeTimeoutMs],
      [3_600_000, 60_000, 10_000],
    );
    assert.equal(settings.inject.tokenExpirationSeconds, 3600);
  });
  for (const [name, value] of [
    ["BULWARK_REVOKE_DEADLINE_SECONDS", "1h"],
    ["BULWARK_REVOKE_DEADLINE_SECONDS", "0"],
    ["BULWARK_PERMISSION_SWEEP_SECONDS", ""],
    ["BULWARK_REVOKE_TIMEOUT_SECONDS", "NaN"],
    ["BULWARK_PERMISSION_TOKEN_SECONDS", "599"],
  ] as const) {
    it(`given ${name}=${JSON.stringify(value)}, throws naming the variable`, () => {
      assert.throws(
        () => loadSettings({ [name]: value }),
        new RegExp(`${name} must be an integer`),
      );
    });
  }
});
