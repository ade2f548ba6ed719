import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  canonicalJson,
  newNonce,
  ReplayGuard,
  signResult,
  verifyResult,
  type ResultBody,
} from "./signing";

const key = Buffer.from("0123456789abcdef0123456789abcdef");
const now = 1_700_000_000_000;
const body = (over: Partial<ResultBody> = {}): ResultBody => ({
  sender: "edge-1",
  timestamp: now,
  nonce: newNonce(),
  checkedAt: now - 100,
  results: { "edge-1": true, "edge-2": false },
  ...over,
});

describe("canonicalJson", () => {
  it("sorts keys at every level and writes no whitespace", () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [2, { z: true, y: null }], c: "x" } }),
      '{"a":{"c":"x","d":[2,{"y":null,"z":true}]},"b":1}',
    );
  });
  it("is independent of insertion order", () => {
    assert.equal(canonicalJson({ x: 1, y: 2 }), canonicalJson({ y: 2, x: 1 }));
  });
  it("refuses non-finite numbers", () => {
    assert.throws(() => canonicalJson({ n: Number.NaN }), /NaN/);
  });
});

describe("verifyResult", () => {
  it("accepts a genuine message once, then rejects its replay", () => {
    const guard = new ReplayGuard(5000);
    const message = signResult(body(), key);
    assert.equal(verifyResult(message, { key, guard, now }).ok, true);
    const again = verifyResult(message, { key, guard, now: now + 10 });
    assert.deepEqual(again.ok ? "" : again.reason, "replayed");
  });

  it("verifies whatever the key order of the received JSON", () => {
    const message = signResult(body(), key);
    const reordered = JSON.parse(
      JSON.stringify({
        hmac: message.hmac,
        results: message.results,
        checkedAt: message.checkedAt,
        nonce: message.nonce,
        timestamp: message.timestamp,
        sender: message.sender,
      }),
    );
    assert.equal(verifyResult(reordered, { key, guard: new ReplayGuard(5000), now }).ok, true);
  });

  const cases: [string, unknown, string][] = [
    [
      "a changed result",
      { ...signResult(body(), key), results: { "edge-2": true } },
      "bad-signature",
    ],
    ["a changed sender", { ...signResult(body(), key), sender: "edge-9" }, "bad-signature"],
    ["a changed check time", { ...signResult(body(), key), checkedAt: now }, "bad-signature"],
    [
      "another key",
      signResult(body(), Buffer.from("another-key-of-32-bytes-length!!")),
      "bad-signature",
    ],
    [
      "a stale timestamp",
      signResult(body({ timestamp: now - 6000, checkedAt: now - 6000 }), key),
      "stale",
    ],
    [
      "a stale check time under a fresh timestamp",
      signResult(body({ checkedAt: now - 6000 }), key),
      "stale",
    ],
    [
      "a timestamp from the future",
      signResult(body({ timestamp: now + 6000 }), key),
      "from-the-future",
    ],
    [
      "a check time after the timestamp",
      signResult(body({ checkedAt: now + 1 }), key),
      "from-the-future",
    ],
    ["no hmac", { ...body() }, "malformed"],
    [
      "a non-boolean result",
      { ...signResult(body(), key), results: { "edge-2": "yes" } },
      "malformed",
    ],
    ["an extra field", { ...signResult(body(), key), relay: true }, "malformed"],
    ["a short nonce", signResult(body({ nonce: "abc" }), key), "malformed"],
    ["not an object", "hello", "malformed"],
  ];
  for (const [what, raw, reason] of cases) {
    it(`rejects ${what} as ${reason}`, () => {
      const v = verifyResult(raw, { key, guard: new ReplayGuard(5000), now });
      assert.equal(v.ok ? "accepted" : v.reason, reason);
    });
  }

  it("does not record the nonce of a forged message (forgeries cannot block the real one)", () => {
    const guard = new ReplayGuard(5000);
    const real = signResult(body(), key);
    const forged = { ...real, results: {} };
    assert.equal(verifyResult(forged, { key, guard, now }).ok, false);
    assert.equal(verifyResult(real, { key, guard, now }).ok, true);
  });

  it("forgets nonces older than the window", () => {
    const guard = new ReplayGuard(1000);
    for (let i = 0; i < 10; i++) guard.admit(newNonce(), now, now);
    assert.equal(guard.size, 10);
    guard.admit(newNonce(), now + 5000, now + 5000);
    assert.equal(guard.size, 1);
  });
});
