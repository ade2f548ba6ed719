import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  canonicalJson,
  newNonce,
  receivedCheckedAt,
  rememberNonce,
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
  it("records nothing: a message verifies again until its nonce is remembered, then is replayed", () => {
    const guard = new ReplayGuard(5000);
    const message = signResult(body(), key);
    const options = { keys: [key], guard, now, maxSkewMs: 2000 };
    assert.equal(verifyResult(message, options).ok, true);
    assert.equal(verifyResult(message, { ...options, now: now + 10 }).ok, true, "not recorded");
    assert.equal(guard.size, 0);
    assert.equal(rememberNonce(message, guard, now + 10).ok, true);
    const again = verifyResult(message, { ...options, now: now + 20 });
    assert.deepEqual(again.ok ? "" : again.reason, "replayed");
  });

  it("rememberNonce takes a nonce once: a second copy is refused as replayed", () => {
    const guard = new ReplayGuard(5000);
    const message = signResult(body(), key);
    assert.equal(rememberNonce(message, guard, now).ok, true);
    const second = rememberNonce(message, guard, now);
    assert.deepEqual(second.ok ? "" : [second.reason, second.detail], [
      "replayed",
      `nonce ${message.nonce} already seen`,
    ]);
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
    assert.equal(
      verifyResult(reordered, { keys: [key], guard: new ReplayGuard(5000), now, maxSkewMs: 2000 })
        .ok,
      true,
    );
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
      "a timestamp ahead by more than the allowed skew (2 s)",
      signResult(body({ timestamp: now + 2500, checkedAt: now + 2400 }), key),
      "from-the-future",
    ],
    [
      "a timestamp ahead by less than the allowed skew",
      signResult(body({ timestamp: now + 1500, checkedAt: now + 1400 }), key),
      "accepted",
    ],
    [
      "a timestamp behind by less than the message max age (5 s)",
      signResult(body({ timestamp: now - 4000, checkedAt: now - 4100 }), key),
      "accepted",
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
    [
      "more extra signatures than keys may sign",
      { ...signResult(body(), [key, key, key, key, key]) },
      "malformed",
    ],
    ["a short nonce", signResult(body({ nonce: "abc" }), key), "malformed"],
    ["not an object", "hello", "malformed"],
  ];
  for (const [what, raw, reason] of cases) {
    it(`given ${what}, returns ${reason}`, () => {
      const v = verifyResult(raw, {
        keys: [key],
        guard: new ReplayGuard(5000),
        now,
        maxSkewMs: 2000,
      });
      assert.equal(v.ok ? "accepted" : v.reason, reason);
    });
  }

  it("does not record the nonce of a forged message (forgeries cannot block the real one)", () => {
    const guard = new ReplayGuard(5000);
    const real = signResult(body(), key);
    const forged = { ...real, results: {} };
    assert.equal(verifyResult(forged, { keys: [key], guard, now, maxSkewMs: 2000 }).ok, false);
    assert.equal(verifyResult(real, { keys: [key], guard, now, maxSkewMs: 2000 }).ok, true);
  });

  it("forgets nonces older than the window", () => {
    const guard = new ReplayGuard(1000);
    for (let i = 0; i < 10; i++) guard.admit(newNonce(), now, now);
    assert.equal(guard.size, 10);
    guard.admit(newNonce(), now + 5000, now + 5000);
    assert.equal(guard.size, 1);
  });
});

describe("several keys (rotation)", () => {
  const oldKey = key;
  const newKey = Buffer.from("fedcba9876543210fedcba9876543210");
  const verify = (raw: unknown, keys: Buffer[]) => {
    const v = verifyResult(raw, { keys, guard: new ReplayGuard(5000), now, maxSkewMs: 2000 });
    return v.ok ? "accepted" : v.reason;
  };

  it("a message signed with the new and the old key verifies with either alone", () => {
    const both = signResult(body(), [newKey, oldKey]);
    assert.equal(both.extraHmacs?.length, 1);
    assert.equal(verify(both, [oldKey]), "accepted", "a receiver that has not re-read yet");
    assert.equal(verify(both, [newKey]), "accepted", "a receiver past the overlap");
  });

  it("a receiver holding both keys accepts a sender that has only the old one", () => {
    assert.equal(verify(signResult(body(), oldKey), [newKey, oldKey]), "accepted");
  });

  it("a single-key message carries no extraHmacs (the wire format of a daemon not rotating)", () => {
    assert.equal("extraHmacs" in signResult(body(), [key]), false);
  });

  it("a signature by a key the receiver does not hold never counts", () => {
    const other = Buffer.from("another-key-of-32-bytes-length!!");
    assert.equal(verify(signResult(body(), [other, other]), [oldKey, newKey]), "bad-signature");
    const tampered = { ...signResult(body(), [newKey, oldKey]), results: {} };
    assert.equal(verify(tampered, [oldKey, newKey]), "bad-signature");
  });
});

describe("receivedCheckedAt (clock skew)", () => {
  // The sender checked 300 ms before sending; transit 20 ms. Receiver clock: `now`.
  const sent = (skew: number) => ({
    ...body(),
    timestamp: now - 20 + skew,
    checkedAt: now - 320 + skew,
  });
  const cases: [string, number, number][] = [
    ["a synchronised sender: its own check time", 0, now - 320],
    ["a sender 2 s ahead: no later than a synchronised sender's", 2000, now - 300],
    ["a sender 29 s ahead: still no later", 29_000, now - 300],
    ["a sender 2 s behind: its own (earlier) check time", -2000, now - 2320],
  ];
  for (const [what, skew, expected] of cases) {
    it(`given ${what}, returns ${expected - now} ms`, () =>
      assert.equal(receivedCheckedAt(sent(skew), now), expected));
  }
});
