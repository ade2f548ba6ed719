import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { connect, type ConnectionOptions } from "node:tls";
import { describe, it } from "node:test";
import { readClientHello } from "./client-hello";
import { choosePair } from "./store";

/** The first bytes a real Node TLS client sends with these options. */
async function captureHello(options: ConnectionOptions): Promise<Buffer> {
  let resolveBytes: (data: Buffer) => void = () => undefined;
  const got = new Promise<Buffer>(resolve => (resolveBytes = resolve));
  const server = createServer(socket => {
    socket.once("data", (data: Buffer) => {
      resolveBytes(data);
      socket.destroy();
    });
  });
  await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
  const client = connect({
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    ...options,
  });
  client.on("error", () => undefined);
  const data = await got;
  client.destroy();
  server.close();
  return data;
}

describe("readClientHello", () => {
  const cases: [
    string,
    ConnectionOptions,
    { serverName: string | undefined; acceptsEcdsa: boolean; acceptsRsa: boolean },
  ][] = [
    [
      "a default client",
      { servername: "Shop.Test" },
      { serverName: "shop.test", acceptsEcdsa: true, acceptsRsa: true },
    ],
    [
      "a TLS 1.2 client with ECDSA suites only",
      { servername: "a.test", ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", maxVersion: "TLSv1.2" },
      { serverName: "a.test", acceptsEcdsa: true, acceptsRsa: false },
    ],
    [
      "a TLS 1.2 client with RSA suites only",
      { servername: "a.test", ciphers: "ECDHE-RSA-AES128-GCM-SHA256", maxVersion: "TLSv1.2" },
      { serverName: "a.test", acceptsEcdsa: false, acceptsRsa: true },
    ],
    [
      "a TLS 1.3 client with RSA signatures only",
      { servername: "a.test", sigalgs: "rsa_pss_rsae_sha256", minVersion: "TLSv1.3" },
      { serverName: "a.test", acceptsEcdsa: false, acceptsRsa: true },
    ],
    [
      "a TLS 1.3 client with ECDSA signatures only",
      { servername: "a.test", sigalgs: "ecdsa_secp256r1_sha256", minVersion: "TLSv1.3" },
      { serverName: "a.test", acceptsEcdsa: true, acceptsRsa: false },
    ],
    ["a client without SNI", {}, { serverName: undefined, acceptsEcdsa: true, acceptsRsa: true }],
  ];
  for (const [label, options, expected] of cases) {
    it(`given ${label}, reads ${JSON.stringify(expected)}`, async () => {
      const read = readClientHello(await captureHello(options));
      assert.deepEqual(read, { state: "complete", hello: expected });
    });
  }

  it("given a hello cut short, asks for more; given plain HTTP, says not TLS", async () => {
    const hello = await captureHello({ servername: "a.test" });
    assert.deepEqual(readClientHello(hello.subarray(0, 3)), { state: "partial" });
    assert.deepEqual(readClientHello(hello.subarray(0, hello.length - 1)), { state: "partial" });
    assert.deepEqual(readClientHello(Buffer.from("GET / HTTP/1.1\r\n")), { state: "not-tls" });
  });
});

describe("choosePair", () => {
  const ecc = { keyType: "ECC" as const };
  const rsa = { keyType: "RSA" as const };
  const cases: [string, (typeof ecc | typeof rsa)[], boolean, boolean, unknown][] = [
    ["both pairs, a client taking both", [rsa, ecc], true, true, ecc],
    ["both pairs, an RSA-only client", [ecc, rsa], false, true, rsa],
    ["both pairs, an ECDSA-only client", [rsa, ecc], true, false, ecc],
    [
      "only RSA, an ECDSA-only client (the handshake will fail as it must)",
      [rsa],
      true,
      false,
      rsa,
    ],
    ["no pair", [], true, true, undefined],
  ];
  for (const [label, pairs, acceptsEcdsa, acceptsRsa, expected] of cases) {
    it(`given ${label}, picks ${JSON.stringify(expected)}`, () => {
      assert.equal(choosePair(pairs, { serverName: "x", acceptsEcdsa, acceptsRsa }), expected);
    });
  }
});
