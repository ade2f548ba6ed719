import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate, createHash, generateKeyPairSync } from "node:crypto";
import { makeCertificate } from "../../test/fixtures/certificates";
import { OVERSIZED_RSA } from "../../test/fixtures/oversized-rsa";
import { MANGLED_CERTIFICATE } from "../../test/fixtures/mangled-certificate";
import {
  certificateBlocks,
  certificateCoversHost,
  inspectTlsPair,
  MAX_RSA_BITS,
} from "./certificate";
import { pick, seededRandom } from "../../test/harness/generate";

const ecc = makeCertificate({ key: "ecdsa", dnsNames: ["*.example.com", "example.com"] });
const rsa = makeCertificate({ key: "rsa", dnsNames: ["shop.example.com"] });
// After the certificates: openssl truncates notBefore to the second it signs in.
const NOW = new Date();

function errorsOf(result: ReturnType<typeof inspectTlsPair>): string[] {
  return result.ok ? [] : result.errors.map(e => `${e.field}: ${e.message}`);
}

describe("inspectTlsPair", () => {
  it("given an ECDSA pair, returns its key type, names, validity and leaf SHA-1", () => {
    const result = inspectTlsPair(ecc.certPem, ecc.keyPem, NOW);
    assert.ok(result.ok, errorsOf(result).join());
    assert.equal(result.value.keyType, "ECC");
    assert.deepEqual(result.value.dnsNames, ["*.example.com", "example.com"]);
    assert.equal(
      result.value.sha1,
      createHash("sha1").update(new X509Certificate(ecc.certPem).raw).digest("hex"),
    );
    assert.equal(result.value.chainLength, 1);
  });

  it("given an RSA pair, returns RSA", () => {
    const result = inspectTlsPair(rsa.certPem, rsa.keyPem, NOW);
    assert.ok(result.ok);
    assert.equal(result.value.keyType, "RSA");
  });

  const bad: [string, string, string, RegExp][] = [
    ["no certificate", "hello", ecc.keyPem, /tls\.crt"\]: holds no PEM certificate/],
    [
      "a corrupt certificate",
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
      ecc.keyPem,
      /tls\.crt"\]: the leaf certificate is not valid X\.509/,
    ],
    [
      "a corrupt key",
      ecc.certPem,
      "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
      /tls\.key"\]: is not a readable PEM private key/,
    ],
    ["a key of another certificate", ecc.certPem, rsa.keyPem, /tls\.key"\]: does not match/],
  ];
  for (const [title, cert, key, expected] of bad) {
    it(`given ${title}, returns an error naming the field`, () => {
      const errors = errorsOf(inspectTlsPair(cert, key, NOW));
      assert.equal(errors.length, 1, errors.join("; "));
      assert.match(errors[0]!, expected);
    });
  }

  it("given an RSA key over MAX_RSA_BITS, refuses it naming the size (each handshake signs with it)", () => {
    assert.deepEqual(errorsOf(inspectTlsPair(OVERSIZED_RSA.certPem, OVERSIZED_RSA.keyPem, NOW)), [
      `data["tls.crt"]: has an RSA key of 8320 bits; at most ${MAX_RSA_BITS} are served (every TLS handshake signs with it, and Go's clients refuse larger keys)`,
    ]);
  });

  it("given a certificate past its notAfter, returns expired with the date", () => {
    const later = new Date(NOW.getTime() + 40 * 86_400_000);
    assert.match(
      errorsOf(inspectTlsPair(ecc.certPem, ecc.keyPem, later)).join(),
      /tls\.crt"\]: expired on \d{4}-/,
    );
  });

  it("given a time before notBefore, returns not yet valid", () => {
    const earlier = new Date(NOW.getTime() - 2 * 86_400_000);
    assert.match(
      errorsOf(inspectTlsPair(ecc.certPem, ecc.keyPem, earlier)).join(),
      /is not valid before/,
    );
  });
});

describe("certificate names", () => {
  it("given a DNS name that spells out more names (x, DNS:victim), covers none of them", () => {
    // CVE-2021-44532's shape: split naively, the one name reads as three.
    const hostile = makeCertificate({
      key: "ecdsa",
      dnsNames: ["x, DNS:victim.example, DNS:y", "attacker.example"],
    });
    const result = inspectTlsPair(hostile.certPem, hostile.keyPem, NOW);
    assert.ok(result.ok, errorsOf(result).join());
    assert.deepEqual(result.value.dnsNames, ["attacker.example"]);
    for (const host of ["victim.example", "x", "y"])
      assert.equal(certificateCoversHost(result.value, host), false, host);
  });
});

describe("inspectTlsPair: a certificate Node constructs but cannot read", () => {
  it("refuses it on tls.crt (its public key getter threw out of the review, the gateway's TLS compile too)", () => {
    const result = inspectTlsPair(MANGLED_CERTIFICATE.certPem, MANGLED_CERTIFICATE.keyPem, NOW);
    assert.deepEqual(errorsOf(result), [
      'data["tls.crt"]: is not a certificate Bulwark can read (error:03000072:digital envelope routines::decode error)',
    ]);
  });
});

describe("inspectTlsPair: generated pairs", () => {
  it("answers 3 000 mismatched, mutated and foreign pairs with a result, never a throw", () => {
    const random = seededRandom(443);
    const key = (type: "ed25519" | "ec" | "rsa", passphrase?: string) =>
      generateKeyPairSync(
        type as "ec",
        {
          namedCurve: "P-384",
          modulusLength: 1024,
          publicKeyEncoding: { type: "spki", format: "pem" },
          privateKeyEncoding: {
            type: "pkcs8",
            format: "pem",
            ...(passphrase ? { cipher: "aes-128-cbc", passphrase } : {}),
          },
        } as never,
      ) as unknown as { publicKey: string; privateKey: string };
    const foreign = [key("ed25519"), key("ec"), key("rsa"), key("ec", "secret")];
    const certs = [ecc.certPem, rsa.certPem, `${ecc.certPem}${rsa.certPem}`, OVERSIZED_RSA.certPem];
    const keys = [ecc.keyPem, rsa.keyPem, ...foreign.flatMap(k => [k.privateKey, k.publicKey])];
    const mutate = (pem: string) => {
      const at = Math.floor(random() * pem.length);
      const roll = random();
      if (roll < 0.3) return pem.slice(0, at);
      if (roll < 0.6)
        return `${pem.slice(0, at)}${pick(random, ["A", "/", "=", "\n", "-", "\u0000"])}${pem.slice(at + 1)}`;
      if (roll < 0.8)
        return pem.replace("CERTIFICATE", pick(random, ["PRIVATE KEY", "CERT", "X509 CRL"]));
      return pem + pem;
    };
    for (let n = 0; n < 3_000; n++) {
      const cert = random() < 0.5 ? mutate(pick(random, certs)) : pick(random, certs);
      const keyPem = random() < 0.3 ? mutate(pick(random, keys)) : pick(random, keys);
      const result = inspectTlsPair(cert, keyPem, random() < 0.5 ? NOW : undefined);
      if (!result.ok)
        for (const e of result.errors) assert.ok(e.field && e.message, JSON.stringify(e));
    }
  });
});

describe("certificateCoversHost", () => {
  const cases: [string, boolean][] = [
    ["example.com", true],
    ["a.example.com", true],
    ["a.b.example.com", false],
    ["*.example.com", true],
    ["other.com", false],
  ];
  for (const [host, expected] of cases) {
    it(`given host ${host} and names *.example.com, example.com, returns ${expected}`, () => {
      assert.equal(
        certificateCoversHost({ dnsNames: ["*.example.com", "example.com"] }, host),
        expected,
      );
    });
  }
});

describe("certificateBlocks", () => {
  const BEGIN = "-----BEGIN CERTIFICATE-----";
  const END = "-----END CERTIFICATE-----";
  // What it replaced: the same blocks, found by a lazy regular expression (quadratic on BEGINs
  // without an END).
  const lazy = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

  it("finds the blocks the lazy expression found, in 20 000 generated texts", () => {
    const random = seededRandom(7);
    const pieces = [BEGIN, END, "\n", "MIIB", "x", "", "-----", `${BEGIN}${END}`];
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({ length: Math.floor(random() * 8) }, () =>
        pick(random, pieces),
      ).join("");
      assert.deepEqual(certificateBlocks(text), text.match(lazy) ?? [], JSON.stringify(text));
    }
  });

  it("reads a Secret's worth of BEGIN lines without an END, and finds a block after many", () => {
    const many = `${BEGIN}\n`.repeat(40_000);
    assert.deepEqual(certificateBlocks(many), []);
    const withBlock = `${many}${BEGIN}\nMIIB\n${END}\n`;
    assert.deepEqual(certificateBlocks(withBlock), [withBlock.slice(0, -1)]);
  });
});
