import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseKeys } from "./kube";

const k1 = "0123456789abcdef0123";
const k2 = "fedcba9876543210fedc";

describe("parseKeys (the key file or Secret value)", () => {
  const good: [string, string, string[]][] = [
    ["one key, as `echo` writes it", `${k1}\n`, [k1]],
    ["one key, no newline", k1, [k1]],
    ["two keys, newest first", `${k2}\n${k1}\n`, [k2, k1]],
    ["CRLF line ends and blank lines", `${k2}\r\n\r\n${k1}\r\n`, [k2, k1]],
  ];
  for (const [what, raw, expected] of good) {
    it(`given ${what}, returns the keys`, () =>
      assert.deepEqual(
        parseKeys(Buffer.from(raw), "f").map(k => k.toString()),
        expected,
      ));
  }
  const bad: [string, string, RegExp][] = [
    ["an empty file", "\n", /f: no HMAC key$/],
    [
      "a short key on line 2",
      `${k1}\nshort\n`,
      /f: line 2: the HMAC key must be at least 16 bytes$/,
    ],
    ["four keys", `${k1}\n${k2}\n${k1}x\n${k2}x\n`, /f: at most 3 keys \(one per line\), found 4$/],
  ];
  for (const [what, raw, pattern] of bad) {
    it(`given ${what}, throws naming the source`, () =>
      assert.throws(() => parseKeys(Buffer.from(raw), "f"), pattern));
  }
});
