import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { checksumOfIds, checksumOfSortedIds, countIds, diffIds } from "./id-set";

const md5 = (text: string): string => createHash("md5").update(text, "utf8").digest("hex");
const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

describe("checksumOfIds", () => {
  const cases: [string, string[], string][] = [
    ["no IDs", [], ""],
    ["one ID", ["1-1"], "1-1"],
    ["IDs out of order", ["27524-1", "238210-1"], "238210-1,27524-1"],
    ["duplicates", ["5-1", "5-1", "4-1"], "4-1,5-1,5-1"],
    ["non-ASCII names", ["ns/\u{1F600}@1", "ns/\uFF21@1"], "ns/\uFF21@1,ns/\u{1F600}@1"],
  ];
  for (const [title, ids, joined] of cases) {
    it(`given ${title}, returns the MD5 (tengine) and SHA-256 (content) of "${joined}"`, () => {
      assert.equal(checksumOfIds(ids, "tengine"), md5(joined));
      assert.equal(checksumOfIds(ids, "content"), sha256(joined));
    });
  }

  it("given IDs, leaves the caller's array unchanged", () => {
    const ids = ["b", "a"];
    checksumOfIds(ids, "content");
    assert.deepEqual(ids, ["b", "a"]);
  });

  it("given sorted IDs, returns what checksumOfIds returns", () => {
    assert.equal(checksumOfSortedIds(["a", "b"], "content"), checksumOfIds(["b", "a"], "content"));
  });
});

describe("diffIds", () => {
  const cases: [string, string[], string[], string[], string[]][] = [
    ["equal sets", ["a", "b"], ["b", "a"], [], []],
    ["one changed version", ["1-2", "2-1"], ["1-1", "2-1"], ["1-1"], ["1-2"]],
    ["a removed object", ["2-1"], ["1-1", "2-1"], ["1-1"], []],
    ["an added object", ["1-1", "2-1", "3-1"], ["1-1", "2-1"], [], ["3-1"]],
    ["an extra duplicate computed", ["1-1", "1-1"], ["1-1"], [], ["1-1"]],
    ["a duplicate published once computed", ["1-1"], ["1-1", "1-1"], ["1-1"], []],
    ["nothing published", ["b", "a"], [], [], ["a", "b"]],
  ];
  for (const [title, computed, published, missing, unexpected] of cases) {
    it(`given ${title}, returns missing ${JSON.stringify(missing)} and unexpected ${JSON.stringify(unexpected)}`, () => {
      assert.deepEqual(diffIds(computed, published), { missing, unexpected });
    });
  }
});

describe("countIds", () => {
  it("given repeated IDs, returns how often each occurs", () => {
    assert.deepEqual(
      [...countIds(["a", "b", "a"])],
      [
        ["a", 2],
        ["b", 1],
      ],
    );
  });
});
