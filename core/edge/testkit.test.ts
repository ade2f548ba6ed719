import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { applyPatch } from "./testkit";

describe("applyPatch (test support)", () => {
  it("given add, replace, remove and a passing test, returns the patched copy", () => {
    const doc = { a: [1, 2, 3], b: { c: 1 } };
    const out = applyPatch(doc, [
      { op: "test", path: "/b/c", value: 1 },
      { op: "add", path: "/a/1", value: 9 },
      { op: "replace", path: "/b/c", value: 2 },
      { op: "remove", path: "/a/0" },
      { op: "add", path: "/d", value: [] },
    ]);
    assert.deepEqual(out, { a: [9, 2, 3], b: { c: 2 }, d: [] });
    assert.deepEqual(doc, { a: [1, 2, 3], b: { c: 1 } });
  });
  it("given a failing test, an out-of-range index or a missing member, throws", () => {
    assert.throws(() => applyPatch({ a: 1 }, [{ op: "test", path: "/a", value: 2 }]));
    assert.throws(() => applyPatch({ a: [1] }, [{ op: "remove", path: "/a/1" }]));
    assert.throws(() => applyPatch({ a: [1] }, [{ op: "add", path: "/a/3", value: 1 }]));
    assert.throws(() => applyPatch({}, [{ op: "replace", path: "/a", value: 1 }]));
  });
  it("given SuperEdge's per-address ops with original indices, returns the wrong result or throws", () => {
    // Why endpoints.ts replaces whole arrays: two not-ready addresses, indices computed up front.
    const subsets = [{ addresses: [] as string[], notReadyAddresses: ["x", "y"] }];
    assert.throws(() =>
      applyPatch({ subsets }, [
        { op: "remove", path: "/subsets/0/notReadyAddresses/0" },
        { op: "add", path: "/subsets/0/addresses/0", value: "x" },
        { op: "remove", path: "/subsets/0/notReadyAddresses/1" },
        { op: "add", path: "/subsets/0/addresses/1", value: "y" },
      ]),
    );
  });
});
