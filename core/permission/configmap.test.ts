import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { configMapDataBytes, configMapKeyProblems } from "./configmap";

describe("configMapKeyProblems", () => {
  const cases: [string, string[]][] = [
    ["6f1c2b1e-3f0a-4a57-9a51-0d7f3c7e2a10", []],
    ["app.properties", []],
    ["a_b-C.9", []],
    [".hidden", []],
    ["a".repeat(253), []],
    ["a".repeat(254), ["must be no more than 253 characters"]],
    ["", ["must consist of alphanumeric characters, '-', '_' or '.'"]],
    ["ns/name", ["must consist of alphanumeric characters, '-', '_' or '.'"]],
    ["a b", ["must consist of alphanumeric characters, '-', '_' or '.'"]],
    [".", ["must not be '.'"]],
    ["..", ["must not be '..'"]],
    ["..data", ["must not start with '..'"]],
  ];
  for (const [key, expected] of cases) {
    it(`given ${JSON.stringify(key.length > 40 ? key.slice(0, 8) + "…" : key)}, returns ${expected.length === 0 ? "no problem" : expected.join("; ")}`, () => {
      assert.deepEqual(configMapKeyProblems(key), expected);
    });
  }
});

describe("configMapDataBytes", () => {
  const cases: [Record<string, string>, number][] = [
    [{}, 0],
    [{ a: "bc" }, 3],
    [{ a: "é" }, 3],
    [{ a: "1", b: "22" }, 5],
  ];
  for (const [data, expected] of cases) {
    it(`given ${JSON.stringify(data)}, returns ${expected} bytes`, () => {
      assert.equal(configMapDataBytes(data), expected);
    });
  }
});
