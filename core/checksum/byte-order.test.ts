import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compareUtf8, isSortedUtf8, sortUtf8 } from "./byte-order";

const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
const sign = (n: number): number => Math.sign(n);

describe("compareUtf8", () => {
  const cases: [string, string, string][] = [
    ["two ASCII IDs", "27524-1", "238210-1"],
    ["a prefix", "123-1", "123-10"],
    ["equal strings", "a/b@c", "a/b@c"],
    ["Latin-1 against ASCII", "é", "z"],
    ["U+E000 against an astral character", "\uE000", "\u{1F600}"],
    ["U+FFFF against an astral character", "\uFFFF", "\u{10000}"],
    ["two astral characters", "\u{1F600}", "\u{1F601}"],
    ["CJK against an astral character", "中", "\u{20000}"],
  ];
  for (const [title, a, b] of cases) {
    it(`given ${title}, returns the sign of their UTF-8 byte comparison`, () => {
      assert.equal(sign(compareUtf8(a, b)), sign(bytewise(a, b)));
      assert.equal(sign(compareUtf8(b, a)), sign(bytewise(b, a)));
    });
  }
});

describe("sortUtf8", () => {
  it("given ASCII IDs, returns them in byte order (27524-1 after 238210-1)", () => {
    assert.deepEqual(sortUtf8(["27524-1", "238210-1", "123992-1"]), [
      "123992-1",
      "238210-1",
      "27524-1",
    ]);
  });

  it("given IDs where UTF-16 and UTF-8 order differ, returns UTF-8 byte order", () => {
    const ids = ["ns/\u{1F600}@1", "ns/\uFF21@1", "ns/a@1", "ns/\u00e9@1"];
    const expected = [...ids].sort(bytewise);
    assert.notDeepEqual([...ids].sort(), expected, "the case must tell the two orders apart");
    assert.deepEqual(sortUtf8([...ids]), expected);
  });

  it("given duplicates, returns them all", () => {
    assert.deepEqual(sortUtf8(["b", "a", "b"]), ["a", "b", "b"]);
  });
});

describe("isSortedUtf8", () => {
  const cases: [string, string[], boolean][] = [
    ["no strings", [], true],
    ["byte-ordered IDs", ["238210-1", "27524-1"], true],
    ["numerically ordered IDs", ["27524-1", "238210-1"], false],
    ["duplicates", ["a", "a"], true],
    ["UTF-8 order that UTF-16 calls unsorted", ["\uFF21", "\u{1F600}"], true],
    ["UTF-16 order that UTF-8 calls unsorted", ["\u{1F600}", "\uFF21"], false],
  ];
  for (const [title, strings, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () => {
      assert.equal(isSortedUtf8(strings), expected);
    });
  }
});
