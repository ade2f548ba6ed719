import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  attestationPayload,
  generateSigningKey,
  parseSigningKey,
  parseTrustedKeys,
  signAttestation,
  verifyAttestation,
  type Attestation,
} from "./signature";

const ATTESTATION: Attestation = {
  kind: "IngressCheckSum",
  mode: "content",
  checksum: "a".repeat(64),
  timestamp: "2026-12-04T02:00:00.000Z",
  ids: ["shop/web@" + "1".repeat(64), "shop/cart@" + "2".repeat(64)],
};

function keysOf(...pems: string[]) {
  const parsed = parseTrustedKeys(Object.fromEntries(pems.map((pem, i) => [`k${i}`, pem])), "data");
  assert.ok(parsed.ok);
  return parsed.value;
}

describe("signed attestations", () => {
  const signer = generateSigningKey();
  const privateKey = createPrivateKey(signer.privateKeyPem);
  const keys = keysOf(signer.publicKeyPem);

  it("verifies what it signed, naming the key by its fingerprint", () => {
    const signature = signAttestation(ATTESTATION, privateKey);
    assert.equal(signature.keyId, signer.keyId);
    assert.match(signature.keyId, /^ed25519-[0-9a-f]{16}$/);
    assert.deepEqual(verifyAttestation(ATTESTATION, signature, keys), {
      ok: true,
      keyId: signer.keyId,
    });
  });

  it("refuses every field changed after signing", () => {
    const signature = signAttestation(ATTESTATION, privateKey);
    const changed: Attestation[] = [
      { ...ATTESTATION, kind: "SecretCheckSum" },
      { ...ATTESTATION, mode: "tengine" },
      { ...ATTESTATION, checksum: "b".repeat(64) },
      { ...ATTESTATION, timestamp: "2026-12-03T02:00:00.000Z" },
      { ...ATTESTATION, ids: [...ATTESTATION.ids!, "shop/evil@" + "3".repeat(64)] },
      { ...ATTESTATION, ids: ATTESTATION.ids!.slice(1) },
      { ...ATTESTATION, ids: [...ATTESTATION.ids!].reverse() },
      { ...ATTESTATION, ids: undefined },
    ];
    for (const attestation of changed) {
      const verdict = verifyAttestation(attestation, signature, keys);
      assert.equal(verdict.ok, false, JSON.stringify(attestation));
      assert.ok(!verdict.ok && verdict.reason === "BadSignature");
    }
  });

  it("says Unsigned, or BadSignature naming the problem, for what is not a trusted signature", () => {
    const other = createPrivateKey(generateSigningKey().privateKeyPem);
    const forged = signAttestation(ATTESTATION, other);
    const cases: [unknown, string, RegExp][] = [
      [undefined, "Unsigned", /spec\.signature is not set/],
      [{ keyId: signer.keyId }, "BadSignature", /needs keyId and a base64 value/],
      [{ keyId: signer.keyId, value: "not base64!" }, "BadSignature", /base64/],
      [forged, "BadSignature", /is not a trusted key \(trusted: ed25519-/],
      // A trusted key's id on another key's signature.
      [{ ...forged, keyId: signer.keyId }, "BadSignature", /does not verify with key/],
    ];
    for (const [signature, reason, message] of cases) {
      const verdict = verifyAttestation(ATTESTATION, signature, keys);
      assert.ok(!verdict.ok, JSON.stringify(signature));
      assert.equal(verdict.reason, reason);
      assert.match(verdict.message, message);
    }
  });

  it("trusts every key of a rotation, and a removed key no more", () => {
    const next = generateSigningKey();
    const both = keysOf(signer.publicKeyPem, next.publicKeyPem);
    const byOld = signAttestation(ATTESTATION, privateKey);
    const byNew = signAttestation(ATTESTATION, createPrivateKey(next.privateKeyPem));
    assert.ok(verifyAttestation(ATTESTATION, byOld, both).ok);
    assert.ok(verifyAttestation(ATTESTATION, byNew, both).ok);
    const onlyNew = keysOf(next.publicKeyPem);
    assert.ok(!verifyAttestation(ATTESTATION, byOld, onlyNew).ok);
    assert.ok(verifyAttestation(ATTESTATION, byNew, onlyNew).ok);
  });

  it("refuses a key set with an entry that is not an Ed25519 public key, naming the entry", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const rsaPem = rsa.publicKey.export({ type: "spki", format: "pem" }).toString();
    const parsed = parseTrustedKeys({ good: signer.publicKeyPem, old: rsaPem, typo: "abc" }, "cm");
    assert.ok(!parsed.ok);
    assert.deepEqual(
      parsed.errors.map(e => e.field),
      ["cm.old", "cm.typo"],
    );
    assert.match(parsed.errors[0]!.message, /rsa key; Ed25519 is needed/);
    const signing = parseSigningKey(
      rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      "--sign-key",
    );
    assert.ok(!signing.ok && /rsa key; an Ed25519 key is needed/.test(signing.errors[0]!.message));
    assert.ok(!parseSigningKey("nope", "--sign-key").ok);
  });

  it("agrees with OpenSSL: what openssl signs verifies here, what is signed here verifies in openssl", () => {
    const dir = mkdtempSync(join(tmpdir(), "bulwark-sig-"));
    try {
      writeFileSync(join(dir, "key.pem"), signer.privateKeyPem);
      writeFileSync(join(dir, "pub.pem"), signer.publicKeyPem);
      for (let i = 0; i < 20; i++) {
        const attestation = {
          ...ATTESTATION,
          timestamp: `2026-12-04T02:00:${String(i).padStart(2, "0")}Z`,
          ids: ATTESTATION.ids!.slice(0, i % 3),
        };
        writeFileSync(join(dir, "payload"), attestationPayload(attestation));
        execFileSync("openssl", [
          "pkeyutl",
          "-sign",
          "-rawin",
          "-inkey",
          join(dir, "key.pem"),
          "-in",
          join(dir, "payload"),
          "-out",
          join(dir, "sig"),
        ]);
        const value = readFileSync(join(dir, "sig")).toString("base64");
        assert.ok(verifyAttestation(attestation, { keyId: signer.keyId, value }, keys).ok);

        const ours = signAttestation(attestation, privateKey);
        writeFileSync(join(dir, "ours"), Buffer.from(ours.value, "base64"));
        const verified = execFileSync(
          "openssl",
          [
            "pkeyutl",
            "-verify",
            "-rawin",
            "-pubin",
            "-inkey",
            join(dir, "pub.pem"),
            "-in",
            join(dir, "payload"),
            "-sigfile",
            join(dir, "ours"),
          ],
          { encoding: "utf8" },
        );
        assert.match(verified, /Signature Verified Successfully/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
