import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hexDigest, type DigestAlgorithm } from "./digest";

describe("hexDigest", () => {
  // Expected values from Python's hashlib, an implementation independent of Node's.
  const cases: [DigestAlgorithm, string | Buffer, string][] = [
    ["md5", "", "d41d8cd98f00b204e9800998ecf8427e"],
    ["md5", "a,b", "b345e1dc09f20fdefdea469f09167892"],
    ["sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"],
    ["sha1", Buffer.from([0, 1, 2]), "0c7a623fd2bbc05b06423be359e4021d36e721ad"],
    ["sha256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["sha256", "é", "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c"],
  ];
  for (const [algorithm, data, expected] of cases) {
    it(`given ${algorithm} of ${JSON.stringify(data)}, returns ${expected}`, () => {
      assert.equal(hexDigest(algorithm, data), expected);
    });
  }
});
