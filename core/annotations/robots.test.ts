import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseRobots } from "./robots";
import { annotationKey } from "./validators";
import type { Result } from "../result";

const KEY = annotationKey("disable-robots");

describe("parseRobots", () => {
  const cases: [string, Record<string, string> | undefined, Result<unknown>][] = [
    ["no annotations", undefined, { ok: true, value: undefined, warnings: [] }],
    [
      "disable-robots true",
      { [KEY]: "true" },
      { ok: true, value: { disableRobots: true }, warnings: [] },
    ],
    [
      "disable-robots false",
      { [KEY]: "false" },
      { ok: true, value: { disableRobots: false }, warnings: [] },
    ],
    [
      "disable-robots yes",
      { [KEY]: "yes" },
      {
        ok: false,
        errors: [{ field: annotationPath(KEY), message: `expected "true" or "false", got "yes"` }],
        warnings: [],
      },
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected.ok ? JSON.stringify(expected.value) : "an error naming the key"}`, () => {
      assert.deepEqual(parseRobots(annotations), expected);
    });
  }
});
