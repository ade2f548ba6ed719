import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, describe, it } from "node:test";
import { PasswordVerifier } from "./password-verifier";

const bcrypt = (password: string, cost: number): string =>
  execFileSync("htpasswd", ["-nbB", "-C", String(cost), "u", password], { encoding: "utf8" })
    .trim()
    .slice(2);

describe("password verifier (worker threads)", () => {
  const verifier = new PasswordVerifier({ threads: 1, maxQueue: 2, cacheTtlMs: 60_000 });
  after(() => verifier.close());
  const hash = bcrypt("s3cret", 4);

  it("says match and mismatch, and remembers only a match, under a key that is not the password", async () => {
    const good = verifier.keyOf("u", Buffer.from("s3cret"), hash);
    const bad = verifier.keyOf("u", Buffer.from("wrong"), hash);
    assert.doesNotMatch(good, /s3cret/);
    assert.equal(verifier.remembered(good), false);
    assert.equal(await verifier.verify(good, Buffer.from("s3cret"), hash), "match");
    assert.equal(await verifier.verify(bad, Buffer.from("wrong"), hash), "mismatch");
    assert.equal(verifier.remembered(good), true);
    assert.equal(verifier.remembered(bad), false);
    assert.equal(verifier.remembered(good, Date.now() + 61_000), false, "forgotten after the TTL");
  });

  it("keys differ by user, password and stored hash", () => {
    const keys = new Set([
      verifier.keyOf("u", Buffer.from("p"), hash),
      verifier.keyOf("v", Buffer.from("p"), hash),
      verifier.keyOf("u", Buffer.from("q"), hash),
      verifier.keyOf("u", Buffer.from("p"), `${hash}x`),
      verifier.keyOf("u:", Buffer.from("p"), hash),
    ]);
    assert.equal(keys.size, 5);
  });

  it("keeps the event loop free while a cost-12 bcrypt is checked, and answers busy past its queue", async () => {
    const slow = bcrypt("slow", 12);
    const events: string[] = [];
    const pending = verifier
      .verify(verifier.keyOf("u", Buffer.from("slow"), slow), Buffer.from("slow"), slow)
      .then(verdict => events.push(`bcrypt ${verdict}`));
    // Two more wait for the one thread; the queue holds two, so a fourth is refused at once.
    const waiting = [1, 2].map(() => verifier.verify("k", Buffer.from("x"), hash));
    assert.equal(await verifier.verify("k", Buffer.from("x"), hash), "busy");
    await new Promise(resolve => setImmediate(resolve));
    events.push("event loop turned");
    await pending;
    assert.deepEqual(events, ["event loop turned", "bcrypt match"]);
    assert.deepEqual(await Promise.all(waiting), ["mismatch", "mismatch"]);
  });

  it("runs one owner's checks one at a time, so its costly hashes leave a thread to others", async () => {
    const two = new PasswordVerifier({ threads: 2 });
    try {
      const slow = bcrypt("slow", 12);
      const order: string[] = [];
      const costly = [1, 2].map(i =>
        two
          .verify(`a${i}`, Buffer.from("slow"), slow, "tenant-a")
          .then(v => order.push(`a${i} ${v}`)),
      );
      // Submitted after both of tenant A's: it takes the thread A's second check may not.
      const cheap = two
        .verify("b", Buffer.from("s3cret"), hash, "tenant-b")
        .then(v => order.push(`b ${v}`));
      await Promise.all([...costly, cheap]);
      assert.deepEqual(order, ["b match", "a1 match", "a2 match"]);
    } finally {
      await two.close();
    }
  });

  it("a remembered password cannot be used against another entry with the same key material", async () => {
    const other = bcrypt("other", 4);
    const key = verifier.keyOf("u", Buffer.from("s3cret"), other);
    assert.equal(verifier.remembered(key), false);
    assert.equal(await verifier.verify(key, Buffer.from("s3cret"), other), "mismatch");
  });
});
