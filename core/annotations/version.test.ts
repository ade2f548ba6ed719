import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseVersion } from "./version";
import { annotationKey } from "./validators";
import type { Result } from "../result";

const KEY = annotationKey("version");
const wrong = (raw: string): Result<unknown> => ({
  ok: false,
  errors: [
    {
      field: annotationPath(KEY),
      message: `expected an integer of 0 or more, got "${raw}"`,
    },
  ],
  warnings: [],
});

describe("parseVersion", () => {
  const cases: [string, Record<string, string> | undefined, Result<unknown>][] = [
    ["no annotations", undefined, { ok: true, value: undefined, warnings: [] }],
    ["version 3", { [KEY]: "3" }, { ok: true, value: 3, warnings: [] }],
    [
      "version 0",
      { [KEY]: "0" },
      {
        ok: true,
        value: 0,
        warnings: [`${KEY} is 0: this object is left out of the tengine-mode checksum`],
      },
    ],
    ["version -1", { [KEY]: "-1" }, wrong("-1")],
    ["version 2^53", { [KEY]: "9007199254740992" }, wrong("9007199254740992")],
    ["version v2", { [KEY]: "v2" }, wrong("v2")],
    ["version 1.0", { [KEY]: "1.0" }, wrong("1.0")],
    ["an empty version", { [KEY]: "" }, wrong("")],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected.ok ? JSON.stringify(expected.value) : "an error naming the key"}`, () => {
      assert.deepEqual(parseVersion(annotations), expected);
    });
  }
});
