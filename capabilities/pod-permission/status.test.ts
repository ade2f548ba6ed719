import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { initialPermissionStatus } from "./status";

describe("initialPermissionStatus", () => {
  const cases: [string, Record<string, string> | undefined, string | undefined][] = [
    ["no annotations", undefined, undefined],
    ["no group", { other: "x" }, undefined],
    ["an empty group", { "permission.bulwark.dev/group": "" }, undefined],
    ["a group", { "permission.bulwark.dev/group": "db-readers" }, "pending"],
    [
      "a group and a status already",
      { "permission.bulwark.dev/group": "db-readers", "permission.bulwark.dev/status": "granted" },
      undefined,
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () => {
      assert.equal(initialPermissionStatus(annotations), expected);
    });
  }
});
