// The init client over real TLS: it trusts exactly the CA it is given (BULWARK_PERMISSION_CA or
// _PATH), refuses a server that CA did not sign before sending its token, and names bad CA settings.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPki, issueLoopbackServingCertificate, type Pki } from "../hack/control-plane/pki";
import { realIo, runInit } from "./client";
import { loadCa, loadInitSettings } from "./settings";

const POD = { POD_NAME: "web-1", POD_NAMESPACE: "shop", POD_UID: "u1", POD_IP: "10.0.0.1" };

describe("bulwark-init over TLS", () => {
  let dir: string;
  let ours: Pki;
  let theirs: Pki;
  let server: Server;
  let url: string;
  const seen: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "bulwark-init-tls-"));
    for (const name of ["ours", "theirs"]) mkdirSync(join(dir, name));
    ours = createPki(join(dir, "ours"));
    theirs = createPki(join(dir, "theirs"));
    const pair = issueLoopbackServingCertificate(ours, "server");
    server = createServer(
      { cert: readFileSync(pair.certPath), key: readFileSync(pair.keyPath) },
      (req, res) => {
        seen.push(`${req.method} ${req.headers.authorization ?? "-"}`);
        res.writeHead(202, { "content-type": "application/json" });
        res.end(JSON.stringify({ verdict: "granted" }));
      },
    );
    await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(env: Record<string, string>) {
    const loaded = loadInitSettings({ ...POD, BULWARK_PERMISSION_SERVER: url, ...env });
    assert.ok(loaded.ok, loaded.ok ? "" : loaded.message);
    const ca = loadCa(loaded.settings.ca, p => readFileSync(p, "utf8"));
    assert.ok(ca.ok);
    const io = { ...realIo(ca.ca), say: () => {}, readToken: () => "tok" };
    return runInit(loaded.settings, io);
  }

  it("given the CA that signed the server in BULWARK_PERMISSION_CA, is granted", async () => {
    seen.splice(0);
    assert.deepEqual(await run({ BULWARK_PERMISSION_CA: ours.caPem }), { granted: true });
    assert.deepEqual(seen, ["POST Bearer tok"]);
  });

  it("given the CA as a file in BULWARK_PERMISSION_CA_PATH, is granted", async () => {
    assert.deepEqual(await run({ BULWARK_PERMISSION_CA_PATH: ours.caCertPath }), {
      granted: true,
    });
  });

  it("given another CA, refuses at once with one line and never sends the token", async () => {
    seen.splice(0);
    assert.deepEqual(await run({ BULWARK_PERMISSION_CA: theirs.caPem }), {
      granted: false,
      reason:
        "refused: the permission server's certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
    });
    assert.deepEqual(seen, [], "the handshake failed before any request");
  });

  it("given no CA, trusts only Node's public roots: a private CA's server is refused", async () => {
    const result = await run({});
    assert.equal(result.granted, false);
    assert.match(
      (result as { reason: string }).reason,
      /^refused: the permission server's certificate is not trusted/,
    );
  });
});

describe("bulwark-init CA settings", () => {
  const base = { ...POD, BULWARK_PERMISSION_SERVER: "https://ps.bulwark-system.svc:8443" };
  const cases: [string, Record<string, string>, string][] = [
    [
      "a CA that is not PEM",
      { BULWARK_PERMISSION_CA: "MIIB" },
      "BULWARK_PERMISSION_CA: must hold PEM certificates (-----BEGIN CERTIFICATE-----)",
    ],
    [
      "a CA path with an http:// server",
      { BULWARK_PERMISSION_CA_PATH: "/ca.crt", BULWARK_PERMISSION_SERVER: "http://ps:8443" },
      "BULWARK_PERMISSION_CA_PATH: a CA bundle needs an https:// BULWARK_PERMISSION_SERVER (plain http would verify nothing)",
    ],
  ];
  for (const [title, env, message] of cases) {
    it(`given ${title}, names the variable`, () => {
      const loaded = loadInitSettings({ ...base, ...env });
      assert.deepEqual(loaded, { ok: false, message });
    });
  }

  it("given both set as PEM and path, asks for one", () => {
    const pem = "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
    const loaded = loadInitSettings({
      ...base,
      BULWARK_PERMISSION_CA: pem,
      BULWARK_PERMISSION_CA_PATH: "/ca.crt",
    });
    assert.deepEqual(loaded, {
      ok: false,
      message: "BULWARK_PERMISSION_CA_PATH and BULWARK_PERMISSION_CA are both set; set one",
    });
  });

  it("given a CA path that cannot be read, names it", () => {
    const result = loadCa({ path: "/nonexistent/ca.crt" }, p => readFileSync(p, "utf8"));
    assert.equal(result.ok, false);
    assert.match(
      (result as { message: string }).message,
      /^BULWARK_PERMISSION_CA_PATH: cannot read \/nonexistent\/ca\.crt: ENOENT/,
    );
  });
});
