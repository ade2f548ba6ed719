import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { annotationPath, keyOf, parseFamily, type Family } from "./family";
import { annotation, annotationKey, parseBool, parseIntIn } from "./validators";
import type { Result } from "../result";

// A two-field family with one rule between fields, to exercise the runner alone.
const fields = {
  on: { annotation: "test-on", type: "boolean", default: "false", doc: "on" },
  count: { annotation: "test-count", type: "integer", default: "", doc: "count" },
} as const;
const schema = z
  .object({
    on: annotation(parseBool).optional(),
    count: annotation(raw => parseIntIn(raw, 0, 9)).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.count !== undefined && v.on !== true) {
      ctx.addIssue({ code: "custom", path: ["count"], message: "needs on" });
    }
  });
const family: Family<z.output<typeof schema>, keyof typeof fields> = {
  name: "robots",
  fields,
  schema,
  warnings: (_value, present) => [...present].map(f => `saw ${keyOf(family, f)}`),
};

const ON = annotationKey("test-on");
const COUNT = annotationKey("test-count");

describe("parseFamily", () => {
  const cases: [string, Record<string, string> | undefined, Result<unknown>][] = [
    ["no annotations", undefined, { ok: true, value: undefined, warnings: [] }],
    [
      "only foreign annotations",
      { "test-on": "x", "a.io/test-on": "x" },
      { ok: true, value: undefined, warnings: [] },
    ],
    [
      "valid values",
      { [ON]: "true", [COUNT]: "3" },
      { ok: true, value: { on: true, count: 3 }, warnings: [`saw ${ON}`, `saw ${COUNT}`] },
    ],
    [
      "two malformed values",
      { [ON]: "yes", [COUNT]: "ten" },
      {
        ok: false,
        errors: [
          { field: annotationPath(ON), message: `expected "true" or "false", got "yes"` },
          {
            field: annotationPath(COUNT),
            message: `expected an integer between 0 and 9, got "ten"`,
          },
        ],
        warnings: [],
      },
    ],
    [
      "a rule between fields broken",
      { [COUNT]: "3" },
      { ok: false, errors: [{ field: annotationPath(COUNT), message: "needs on" }], warnings: [] },
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected.ok ? "ok" : "errors naming the keys"}`, () => {
      assert.deepEqual(parseFamily(family, annotations), expected);
    });
  }
});

describe("annotationPath", () => {
  it("given a key, returns the metadata.annotations field with the key quoted", () => {
    assert.equal(annotationPath(ON), `metadata.annotations["${ON}"]`);
  });
});
