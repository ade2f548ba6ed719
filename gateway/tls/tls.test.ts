import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { connect, type TLSSocket } from "node:tls";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { namedBackend, type Backend } from "../proxy/testkit";
import type { TlsPair } from "../view";
import { makeCertificate, type TestCertificate } from "../../test/fixtures/certificates";
import { MANGLED_CERTIFICATE } from "../../test/fixtures/mangled-certificate";
import { compileTls, findCertificates } from "./compile";

const pair = (name: string, cert: TestCertificate): TlsPair => ({
  namespace: "default",
  name,
  cert: cert.certPem,
  key: cert.keyPem,
});

// TLS 1.2 suites: one family per key type, so the server must pick the matching certificate.
const ECDSA_ONLY = {
  ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256",
  sigalgs: "ecdsa_secp256r1_sha256",
  maxVersion: "TLSv1.2",
} as const;
const RSA_ONLY = {
  ciphers: "ECDHE-RSA-AES128-GCM-SHA256",
  sigalgs: "rsa_pss_rsae_sha256:rsa_pkcs1_sha256",
  maxVersion: "TLSv1.2",
} as const;
// TLS 1.3 picks by signature algorithm alone.
const ECDSA_ONLY_13 = { sigalgs: "ecdsa_secp256r1_sha256", minVersion: "TLSv1.3" } as const;
const RSA_ONLY_13 = { sigalgs: "rsa_pss_rsae_sha256", minVersion: "TLSv1.3" } as const;

interface Handshake {
  socket: TLSSocket;
  fingerprint: string;
  keyType: string | undefined;
}

function handshake(
  port: number,
  servername: string | undefined,
  options: Record<string, string> = {},
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: "127.0.0.1", port, servername, rejectUnauthorized: false, ...options },
      () => {
        const peer = socket.getPeerX509Certificate();
        resolve({
          socket,
          fingerprint: peer?.fingerprint256 ?? "",
          keyType: peer?.publicKey.asymmetricKeyType,
        });
      },
    );
    socket.once("error", reject);
  });
}

const fingerprintOf = (cert: TestCertificate) => new X509Certificate(cert.certPem).fingerprint256;

/** One HTTP/1.1 request on an open TLS socket (keep-alive), resolving with the response text. */
function requestOn(socket: TLSSocket, host: string, path: string): Promise<string> {
  return new Promise(resolve => {
    let text = "";
    const onData = (data: Buffer) => {
      text += data.toString();
      const head = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text);
      const whole =
        length === null
          ? text.endsWith("\r\n0\r\n\r\n")
          : text.length >= head + 4 + Number(length[1]);
      if (head >= 0 && whole) {
        socket.off("data", onData);
        resolve(text);
      }
    };
    socket.on("data", onData);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  });
}

describe("TLS: certificates per server name", () => {
  let plane: DataPlane;
  let backend: Backend;
  const ecc = makeCertificate({ key: "ecdsa", dnsNames: ["shop.test"] });
  const rsa = makeCertificate({ key: "rsa", dnsNames: ["shop.test"] });
  const wildcard = makeCertificate({ key: "ecdsa", dnsNames: ["*.wild.test"] });
  const rotated = makeCertificate({ key: "ecdsa", dnsNames: ["shop.test"] });
  const fallback = makeCertificate({ key: "ecdsa", dnsNames: ["fallback.test"] });
  let version = 0;

  const tlsView = (shopEcc: TestCertificate) =>
    view(
      ++version,
      [
        ingress({
          name: "shop",
          tls: [
            { hosts: ["shop.test"], secretName: "shop-ecc" },
            { hosts: ["shop.test"], secretName: "shop-rsa" },
            { hosts: ["*.wild.test"], secretName: "wild" },
          ],
          rules: [
            { host: "shop.test", paths: [{ path: "/", service: "web" }] },
            { host: "*.wild.test", paths: [{ path: "/", service: "web" }] },
          ],
        }),
      ],
      [
        endpointSlice({
          service: "web",
          ports: [{ port: backend.port }],
          endpoints: [{ address: "127.0.0.1" }],
        }),
      ],
      [pair("shop-ecc", shopEcc), pair("shop-rsa", rsa), pair("wild", wildcard)],
    );

  before(async () => {
    backend = await namedBackend("web");
    plane = await startDataPlane({
      httpPort: 0,
      httpsPort: 0,
      host: "127.0.0.1",
      defaultCertificates: [{ cert: fallback.certPem, key: fallback.keyPem }],
    });
    assert.deepEqual((await plane.apply(tlsView(ecc))).problems, []);
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  const port = () => plane.httpsPort ?? 0;

  for (const [label, ecdsaOptions, rsaOptions] of [
    ["TLS 1.2", ECDSA_ONLY, RSA_ONLY],
    ["TLS 1.3", ECDSA_ONLY_13, RSA_ONLY_13],
  ] as const) {
    it(`given a ${label} client offering only ECDSA, serves the ECC certificate`, async () => {
      const { socket, fingerprint, keyType } = await handshake(port(), "shop.test", ecdsaOptions);
      socket.destroy();
      assert.equal(keyType, "ec");
      assert.equal(fingerprint, fingerprintOf(ecc));
    });
    it(`given a ${label} client offering only RSA, serves the RSA certificate of the same host`, async () => {
      const { socket, fingerprint, keyType } = await handshake(port(), "shop.test", rsaOptions);
      socket.destroy();
      assert.equal(keyType, "rsa");
      assert.equal(fingerprint, fingerprintOf(rsa));
    });
  }

  it("given a name under a wildcard host, serves the wildcard certificate", async () => {
    const { socket, fingerprint } = await handshake(port(), "a.wild.test");
    socket.destroy();
    assert.equal(fingerprint, fingerprintOf(wildcard));
  });

  it("given an unknown server name or none, serves the default certificate", async () => {
    for (const name of ["nobody.test", "x.y.wild.test", undefined]) {
      const { socket, fingerprint } = await handshake(port(), name);
      socket.destroy();
      assert.equal(fingerprint, fingerprintOf(fallback), String(name));
    }
  });

  it("serves HTTPS with X-Forwarded-Proto https", async () => {
    const { socket } = await handshake(port(), "shop.test");
    const text = await requestOn(socket, "shop.test", "/p");
    socket.destroy();
    assert.match(text, /^HTTP\/1\.1 200/);
    assert.match(text, /"x-forwarded-proto":"https"/);
  });

  it("rotates a certificate for new handshakes while an open connection keeps serving", async () => {
    const old = await handshake(port(), "shop.test", ECDSA_ONLY);
    assert.equal(old.fingerprint, fingerprintOf(ecc));
    assert.match(await requestOn(old.socket, "shop.test", "/before"), /^HTTP\/1\.1 200/);
    await plane.apply(tlsView(rotated));
    const fresh = await handshake(port(), "shop.test", ECDSA_ONLY);
    fresh.socket.destroy();
    assert.equal(fresh.fingerprint, fingerprintOf(rotated));
    // The old connection (made with the old certificate) is still open and still answers.
    assert.match(await requestOn(old.socket, "shop.test", "/after"), /^HTTP\/1\.1 200/);
    assert.equal(old.socket.destroyed, false);
    old.socket.destroy();
  });
});

describe("compileTls", () => {
  const ecc = makeCertificate({ key: "ecdsa", dnsNames: ["a.test"] });
  const ecc2 = makeCertificate({ key: "ecdsa", dnsNames: ["a.test"] });
  const other = makeCertificate({ key: "rsa", dnsNames: ["other.test"] });

  it("keeps one certificate per key type, oldest ingress first, and reports the rest", () => {
    const compiled = compileTls(
      view(
        1,
        [
          ingress({
            name: "new",
            created: "2025-02-01T00:00:00Z",
            tls: [{ hosts: ["a.test"], secretName: "ecc2" }],
          }),
          ingress({
            name: "old",
            created: "2025-01-01T00:00:00Z",
            tls: [{ hosts: ["a.test"], secretName: "ecc" }],
          }),
        ],
        [],
        [pair("ecc", ecc), pair("ecc2", ecc2)],
      ),
      new Date(),
    );
    assert.equal(findCertificates(compiled.table, "a.test")?.pairs[0]?.pair.name, "ecc");
    assert.deepEqual(compiled.problems, [
      'default/new: spec.tls[0].hosts[0]: "a.test" already has an ECC certificate from default/ecc; one per key type',
    ]);
  });

  it("leaves out a certificate Node constructs but cannot read, reporting it, and serves the other hosts (the compile threw)", () => {
    const compiled = compileTls(
      view(
        1,
        [
          ingress({
            name: "mangled",
            tls: [{ hosts: ["mangled.example"], secretName: "mangled" }],
          }),
          ingress({ name: "fine", tls: [{ hosts: ["a.test"], secretName: "ecc" }] }),
        ],
        [],
        [pair("mangled", MANGLED_CERTIFICATE), pair("ecc", ecc)],
      ),
      new Date(),
    );
    assert.equal(findCertificates(compiled.table, "mangled.example"), undefined);
    assert.equal(findCertificates(compiled.table, "a.test")?.pairs[0]?.pair.name, "ecc");
    assert.deepEqual(compiled.problems, [
      'default/mangled: spec.tls[0].secretName: Secret default/mangled: data["tls.crt"]: is not a certificate Bulwark can read (error:03000072:digital envelope routines::decode error)',
    ]);
  });

  it("leaves out certificates that do not cover the host and Secrets not in the view", () => {
    const compiled = compileTls(
      view(
        1,
        [
          ingress({
            name: "i",
            tls: [
              { hosts: ["a.test"], secretName: "other" },
              { hosts: ["a.test"], secretName: "gone" },
            ],
          }),
        ],
        [],
        [pair("other", other)],
      ),
      new Date(),
    );
    assert.equal(findCertificates(compiled.table, "a.test"), undefined);
    assert.equal(compiled.problems.length, 2);
    assert.match(compiled.problems[0] ?? "", /does not cover "a.test"/);
    assert.match(compiled.problems[1] ?? "", /Secret default\/gone is not in the view/);
  });

  it("gives a rotated certificate a new set id, and equal sets one id", () => {
    const ids = (cert: TestCertificate) =>
      findCertificates(
        compileTls(
          view(
            1,
            [ingress({ name: "i", tls: [{ hosts: ["a.test"], secretName: "s" }] })],
            [],
            [pair("s", cert)],
          ),
          new Date(),
        ).table,
        "a.test",
      )?.id;
    assert.equal(ids(ecc), ids(ecc));
    assert.notEqual(ids(ecc), ids(ecc2));
  });
});
