import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { finalizerRemovalPatch, type JsonPatchOp } from "./json-patch";

const F = "stke.io/podpermission-protection";

describe("finalizerRemovalPatch", () => {
  const cases: [string, string[] | undefined, JsonPatchOp[] | undefined][] = [
    ["no finalizers", undefined, undefined],
    ["an empty list", [], undefined],
    ["only other finalizers", ["batch.kubernetes.io/job-tracking"], undefined],
    ["a finalizer that only starts like ours", [`${F}-extra`], undefined],
    [
      "ours alone",
      [F],
      [
        { op: "test", path: "/metadata/finalizers/0", value: F },
        { op: "remove", path: "/metadata/finalizers/0" },
      ],
    ],
    [
      "ours after another",
      ["batch.kubernetes.io/job-tracking", F],
      [
        { op: "test", path: "/metadata/finalizers/1", value: F },
        { op: "remove", path: "/metadata/finalizers/1" },
      ],
    ],
    [
      "ours twice",
      [F, "x/y", F],
      [
        { op: "test", path: "/metadata/finalizers/2", value: F },
        { op: "remove", path: "/metadata/finalizers/2" },
        { op: "test", path: "/metadata/finalizers/0", value: F },
        { op: "remove", path: "/metadata/finalizers/0" },
      ],
    ],
  ];
  for (const [title, finalizers, expected] of cases) {
    it(`given ${title}, returns ${expected ? `${expected.length} ops` : "undefined"}`, () => {
      assert.deepEqual(finalizerRemovalPatch(finalizers, F), expected);
    });
  }
});
