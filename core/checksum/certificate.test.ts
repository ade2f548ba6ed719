import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstPemBlock, leafCertificateSha1 } from "./certificate";
import { tengineSecretId, tengineSecretIdResult } from "./tengine";

const VERSION = "nginx.ingress.kubernetes.io/version";

interface Pair {
  cert: string;
  key: string;
  /** SHA-1 of the DER, as `openssl x509 -outform DER | openssl dgst -sha1` gives it. */
  opensslSha1: string;
}

let dir = "";
let leaf: Pair;
let other: Pair;

function openssl(args: string[]): string {
  return execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] }).toString();
}

function makePair(name: string): Pair {
  openssl([
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-subj", `/CN=*.${name}.example`, "-days", "1", "-keyout", `${name}.key`, "-out", `${name}.crt`,
  ]); // prettier-ignore
  openssl(["x509", "-in", `${name}.crt`, "-outform", "DER", "-out", `${name}.der`]);
  const digest = openssl(["dgst", "-sha1", "-r", `${name}.der`]).split(" ")[0] ?? "";
  return {
    cert: readFileSync(join(dir, `${name}.crt`), "utf8"),
    key: readFileSync(join(dir, `${name}.key`), "utf8"),
    opensslSha1: digest.trim(),
  };
}

const b64 = (text: string): string => Buffer.from(text).toString("base64");

function secret(cert: string, key: string | undefined) {
  const data: Record<string, string> = { "tls.crt": b64(cert) };
  if (key !== undefined) data["tls.key"] = b64(key);
  return { metadata: { name: "wildcard-118", annotations: { [VERSION]: "5792" } }, data };
}

const messages = (result: ReturnType<typeof leafCertificateSha1>): string[] =>
  result.ok ? [] : result.errors.map(e => e.message);

describe("a real certificate made by openssl", () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "bulwark-checksum-"));
    leaf = makePair("leaf");
    other = makePair("other");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("given a TLS Secret, returns an ID whose third part is the SHA-1 of the leaf's DER", () => {
    assert.match(leaf.opensslSha1, /^[0-9a-f]{40}$/);
    assert.equal(tengineSecretId(secret(leaf.cert, leaf.key)), `118-5792-${leaf.opensslSha1}`);
    const fingerprint = new X509Certificate(leaf.cert).fingerprint
      .replaceAll(":", "")
      .toLowerCase();
    assert.equal(fingerprint, leaf.opensslSha1);
  });

  it("given the same Secret with decoded data (as Pepr passes it), returns the same ID", () => {
    const decoded = {
      ...secret(leaf.cert, leaf.key),
      data: { "tls.crt": leaf.cert, "tls.key": leaf.key },
    };
    assert.equal(
      tengineSecretId(decoded, { secretData: "decoded" }),
      `118-5792-${leaf.opensslSha1}`,
    );
  });

  it("given a chain, returns the SHA-1 of the first certificate only", () => {
    const chain = leaf.cert + other.cert;
    assert.equal(tengineSecretId(secret(chain, leaf.key)), `118-5792-${leaf.opensslSha1}`);
  });

  it("given text before the certificate, skips it as Go's pem.Decode does", () => {
    const withPreamble = `subject=CN = *.leaf.example\n${leaf.cert}`;
    assert.equal(tengineSecretId(secret(withPreamble, leaf.key)), `118-5792-${leaf.opensslSha1}`);
  });

  const refused: [string, () => [string | undefined, string | undefined], string][] = [
    ["no tls.key", () => [leaf.cert, undefined], "tls.key is missing"],
    ["no tls.crt", () => [undefined, leaf.key], "tls.crt is missing"],
    ["a tls.crt with no PEM block", () => ["junk", leaf.key], "tls.crt holds no certificate"],
    [
      "a tls.crt that starts with the key",
      () => [leaf.key + leaf.cert, leaf.key],
      "tls.crt starts with a PRIVATE KEY block, not a certificate",
    ],
    [
      "a certificate block that is not DER",
      () => ["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", leaf.key],
      "tls.crt's first certificate does not parse",
    ],
  ];
  for (const [title, inputs, reason] of refused) {
    it(`given ${title}, returns "${reason}"`, () => {
      const [cert, key] = inputs();
      assert.deepEqual(messages(leafCertificateSha1(cert, key)), [reason]);
    });
  }

  it("given a Secret whose certificate is refused, leaves it out with the reason", () => {
    const result = tengineSecretIdResult(secret("junk", leaf.key));
    assert.deepEqual(messages(result), ["tls.crt holds no certificate"]);
  });

  it("given the key of another certificate, still returns the ID (admission refuses such pairs)", () => {
    assert.equal(tengineSecretId(secret(leaf.cert, other.key)), `118-5792-${leaf.opensslSha1}`);
  });
});

describe("firstPemBlock", () => {
  const der = Buffer.from("hello world!");
  const block = (type: string, body: string) =>
    `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----\n`;
  const cases: [string, string, { type: string; der: Buffer } | undefined][] = [
    ["one block", block("CERTIFICATE", der.toString("base64")), { type: "CERTIFICATE", der }],
    [
      "CRLF line ends",
      block("CERTIFICATE", der.toString("base64")).replaceAll("\n", "\r\n"),
      { type: "CERTIFICATE", der },
    ],
    ["a body split over lines", block("X", "aGVsbG8g\nd29ybGQh"), { type: "X", der }],
    [
      "headers before the body",
      block("X", `Proc-Type: 4,ENCRYPTED\n\n${der.toString("base64")}`),
      { type: "X", der },
    ],
    ["an empty body", "-----BEGIN X-----\n-----END X-----\n", { type: "X", der: Buffer.alloc(0) }],
    [
      "a malformed block, then a good one",
      block("BAD", "*not base64*") + block("GOOD", der.toString("base64")),
      { type: "GOOD", der },
    ],
    [
      "a block whose END names another type",
      `-----BEGIN A-----\nAAAA\n-----END B-----\n`,
      undefined,
    ],
    [
      "a BEGIN that does not start a line",
      `x-----BEGIN A-----\nAAAA\n-----END A-----\n`,
      undefined,
    ],
    ["bad padding", block("X", "aGVsbG8"), undefined],
    ["no block", "just text", undefined],
  ];
  for (const [title, text, expected] of cases) {
    it(`given ${title}, returns ${expected ? expected.type : "undefined"}`, () => {
      assert.deepEqual(firstPemBlock(text), expected);
    });
  }
});
