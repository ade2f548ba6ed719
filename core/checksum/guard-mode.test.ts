import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseGuardMode } from "./guard-mode";

describe("parseGuardMode", () => {
  it("takes the three modes in any case and with spaces", () => {
    assert.deepEqual(parseGuardMode("observe", "X"), { ok: true, value: "observe", warnings: [] });
    assert.equal(parseGuardMode(" ENFORCE ", "X").ok && "enforce", "enforce");
    const off = parseGuardMode("Off", "X");
    assert.ok(off.ok && off.value === "off");
  });

  it("keeps the old booleans: true/on enforce, false/off off", () => {
    for (const [raw, mode] of [
      ["true", "enforce"],
      ["TRUE", "enforce"],
      ["on", "enforce"],
      ["false", "off"],
      ["off", "off"],
    ] as const) {
      const parsed = parseGuardMode(raw, "X");
      assert.ok(parsed.ok, raw);
      assert.equal(parsed.value, mode, raw);
    }
  });

  it("unset or empty gives the fallback", () => {
    const unset = parseGuardMode(undefined, "X", "observe");
    assert.ok(unset.ok && unset.value === "observe");
    const empty = parseGuardMode("  ", "X");
    assert.ok(empty.ok && empty.value === "off");
  });

  it("refuses anything else, naming the field and the value", () => {
    for (const raw of ["yes", "1", "enforcing", "observe,enforce"]) {
      const parsed = parseGuardMode(raw, "BULWARK_INGRESS_CHECKSUM");
      assert.ok(!parsed.ok, raw);
      assert.equal(parsed.errors[0]?.field, "BULWARK_INGRESS_CHECKSUM");
      assert.match(parsed.errors[0]?.message ?? "", new RegExp(JSON.stringify(raw)));
    }
  });
});
