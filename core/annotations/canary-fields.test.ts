import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCanary } from "./canary";
import { canaryFields, canaryFieldsSchema, canaryKey, type CanaryField } from "./canary-fields";
import { annotationPath } from "./family";
import { quote } from "./validators";

// Every malformed value of every canary annotation, on a canary ingress: one error, naming the key.
describe("canary fields, malformed", () => {
  const cases: [CanaryField, string, string][] = [
    ["enabled", "yes", `expected "true" or "false", got "yes"`],
    ["weight", "abc", `expected an integer between 0 and 10000, got "abc"`],
    ["weight", "-1", `expected an integer between 0 and 10000, got "-1"`],
    ["weight", "10001", `expected an integer between 0 and 10000, got "10001"`],
    ["weightTotal", "-1", `expected an integer between 0 and 10000, got "-1"`],
    ["weightTotal", "100.0", `expected an integer between 0 and 10000, got "100.0"`],
    ["header", "X Canary", `got "X Canary"`],
    ["headerValue", "a||", `(entry 2 is empty)`],
    ["headerPattern", "[", 'got "[" (error parsing regexp: missing closing ]: `[`)'],
    ["cookie", "", `got ""`],
    ["cookieValue", "a b", `(entry 1 "a b" has a space or one of ",;\\)`],
    ["query", "a&b", `got "a&b"`],
    [
      "queryValue",
      "1||2||3||4||5||6||7||8||9||10||11||12||13||14||15||16||17||18||19||20||21",
      `(21 entries)`,
    ],
    ["modDivisor", "1", `expected an integer between 2 and 100, got "1"`],
    ["modDivisor", "101", `expected an integer between 2 and 100, got "101"`],
    ["modOperator", "=", `got "="`],
    ["modRemainder", "-1", `expected an integer between 0 and 99, got "-1"`],
    ["requestAddHeader", "X-A=1", `(entry 1 "X-A=1" has no ":" between name and value)`],
    ["requestAppendHeader", "A:1||B:2||C:3", `(3 entries)`],
    ["requestAddQuery", "a:b", `(entry 1 "a:b" has no "=" between name and value)`],
    ["responseAddHeader", ":1", `(entry 1 ":1" has an invalid header name "")`],
    ["responseAppendHeader", "X-A:", `(entry 1 "X-A:" has a value that is empty)`],
  ];
  for (const [field, raw, ending] of cases) {
    const key = canaryKey(field);
    it(`given ${key}: ${quote(raw)}, returns an error naming ${key}`, () => {
      const annotations = { [canaryKey("enabled")]: "true", [key]: raw };
      const result = parseCanary(annotations);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.errors.length, 1, JSON.stringify(result.errors));
      assert.equal(result.errors[0]?.field, annotationPath(key));
      assert.ok(result.errors[0]?.message.endsWith(ending), result.errors[0]?.message);
      assert.ok(result.errors[0]?.message.startsWith("expected "), result.errors[0]?.message);
    });
  }
});

describe("canaryFields", () => {
  it("given the field table, returns the same fields as the schema", () => {
    assert.deepEqual(
      Object.keys(canaryFields).sort(),
      Object.keys(canaryFieldsSchema.shape).sort(),
    );
  });
  it("given every annotation, returns distinct canary-prefixed names", () => {
    const names = Object.values(canaryFields).map(f => f.annotation);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.every(n => n === "canary" || n.startsWith("canary-")));
  });
});
