import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { fieldPath, issueErrors, parseFields } from "./field-errors";

describe("fieldPath", () => {
  const cases: [string, PropertyKey[], string][] = [
    ["spec", [], "spec"],
    ["spec", ["permissions", 1, "provider"], "spec.permissions[1].provider"],
    ["spec.permissions[0].params", ["privileges", 2], "spec.permissions[0].params.privileges[2]"],
    ["", ["image"], "image"],
    ["", [0, "a"], "[0].a"],
  ];
  for (const [prefix, path, expected] of cases) {
    it(`given prefix ${JSON.stringify(prefix)} and path ${JSON.stringify(path)}, returns ${expected}`, () => {
      assert.equal(fieldPath(prefix, path), expected);
    });
  }
});

describe("issueErrors", () => {
  it("given zod issues, returns one FieldError per issue under the prefix", () => {
    const parsed = z.object({ a: z.array(z.int()) }).safeParse({ a: [1, "x"] });
    assert.equal(parsed.success, false);
    const errors = issueErrors("spec", parsed.error?.issues ?? []);
    assert.deepEqual(
      errors.map(e => e.field),
      ["spec.a[1]"],
    );
  });
});

describe("parseFields", () => {
  const schema = z.object({ name: z.string(), port: z.int().max(10, "too big") });
  const cases: [string, unknown, { field: string; message: string }[] | undefined][] = [
    ["a valid object", { name: "a", port: 1 }, undefined],
    ["a missing field", { port: 1 }, [{ field: "spec.name", message: "is required" }]],
    ["a schema message", { name: "a", port: 11 }, [{ field: "spec.port", message: "too big" }]],
  ];
  for (const [title, input, expected] of cases) {
    it(`given ${title}, returns ${expected ? "its errors" : "the value"}`, () => {
      const result = parseFields(schema, input, "spec");
      if (expected === undefined)
        assert.deepEqual(result, { ok: true, value: input, warnings: [] });
      else assert.deepEqual(result, { ok: false, errors: expected, warnings: [] });
    });
  }
});
