import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseGoBool, parseGoInt } from "./go-strconv";

describe("parseGoInt", () => {
  const cases: [string, string | undefined][] = [
    ["0", "0"],
    ["123992", "123992"],
    ["007", "7"],
    ["+5", "5"],
    ["-5", "-5"],
    ["-0", "0"],
    ["000000000000000000000042", "42"],
    ["9223372036854775807", "9223372036854775807"],
    ["-9223372036854775808", "-9223372036854775808"],
    ["9223372036854775808", undefined],
    ["-9223372036854775809", undefined],
    ["", undefined],
    ["+", undefined],
    ["-", undefined],
    ["1_000", undefined],
    [" 1", undefined],
    ["1 ", undefined],
    ["0x10", undefined],
    ["1.0", undefined],
    ["1e3", undefined],
    ["v1", undefined],
    ["١٢", undefined],
  ];
  for (const [text, expected] of cases) {
    it(`given "${text}", returns ${expected === undefined ? "undefined" : `"${expected}"`}`, () => {
      assert.equal(parseGoInt(text), expected);
    });
  }
});

describe("parseGoBool", () => {
  const cases: [string, boolean | undefined][] = [
    ["1", true],
    ["t", true],
    ["T", true],
    ["TRUE", true],
    ["true", true],
    ["True", true],
    ["0", false],
    ["f", false],
    ["F", false],
    ["FALSE", false],
    ["false", false],
    ["False", false],
    ["tRUE", undefined],
    ["yes", undefined],
    ["on", undefined],
    [" true", undefined],
    ["true ", undefined],
    ["01", undefined],
    ["", undefined],
  ];
  for (const [text, expected] of cases) {
    it(`given "${text}", returns ${String(expected)}`, () => {
      assert.equal(parseGoBool(text), expected);
    });
  }
});
