import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect, createServer, createSecureContext } from "node:tls";
import { describe, it } from "node:test";
import { DEFAULT_CERTIFICATE_NAME, makeDefaultCertificates } from "./default-certificate";

const DAY_MS = 24 * 60 * 60 * 1000;

describe("makeDefaultCertificates", () => {
  it("makes a self-signed ECDSA P-256 and an RSA 2048 pair for the default name, valid ten years", async () => {
    const now = new Date("2026-12-04T12:00:00Z");
    const pairs = await makeDefaultCertificates(now);
    assert.equal(pairs.length, 2);
    const keys = pairs.map(p => createPrivateKey(p.key));
    assert.deepEqual(
      keys.map(k => [k.asymmetricKeyType, k.asymmetricKeyDetails]),
      [
        ["ec", { namedCurve: "prime256v1" }],
        ["rsa", { modulusLength: 2048, publicExponent: 65537n }],
      ],
    );
    for (const [i, pair] of pairs.entries()) {
      const cert = new X509Certificate(pair.cert);
      assert.equal(cert.subject, `CN=${DEFAULT_CERTIFICATE_NAME}`);
      assert.equal(cert.issuer, cert.subject, "self-issued");
      assert.equal(cert.subjectAltName, `DNS:${DEFAULT_CERTIFICATE_NAME}`);
      assert.ok(cert.verify(cert.publicKey), "signed by its own key");
      assert.ok(cert.checkPrivateKey(keys[i]!), "the key is the certificate's");
      assert.equal(cert.ca, false);
      assert.equal(new Date(cert.validFrom).getTime(), now.getTime() - 60 * 60 * 1000);
      assert.equal(new Date(cert.validTo).getTime(), now.getTime() + 3650 * DAY_MS);
      assert.match(cert.serialNumber, /^[4-7][0-9A-F]{31}$/, "a positive 16-byte serial");
      assert.doesNotThrow(() => createSecureContext({ cert: pair.cert, key: pair.key }));
    }
  });

  it("makes new keys and serials every time", async () => {
    const [a, b] = await Promise.all([makeDefaultCertificates(), makeDefaultCertificates()]);
    const serials = [...a!, ...b!].map(p => new X509Certificate(p.cert).serialNumber);
    assert.equal(new Set(serials).size, 4);
    assert.notEqual(a![0]!.key, b![0]!.key);
  });

  it("finishes a TLS handshake with each key type", async () => {
    const pairs = await makeDefaultCertificates();
    const server = createServer({ cert: pairs.map(p => p.cert), key: pairs.map(p => p.key) }, s =>
      s.end("ok"),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      for (const [sigalgs, keyType] of [
        ["ecdsa_secp256r1_sha256", "EC"],
        ["rsa_pss_rsae_sha256:rsa_pkcs1_sha256", "RSA"],
      ] as const) {
        const socket = connect({
          port,
          host: "127.0.0.1",
          servername: "unknown.test",
          ca: pairs.map(p => p.cert),
          checkServerIdentity: () => undefined,
          sigalgs,
        });
        await once(socket, "secureConnect");
        const peer = socket.getPeerX509Certificate();
        assert.equal(peer?.publicKey.asymmetricKeyType, keyType === "EC" ? "ec" : "rsa");
        assert.equal(socket.authorized, true, String(socket.authorizationError));
        socket.destroy();
      }
    } finally {
      server.close();
    }
  });
});
