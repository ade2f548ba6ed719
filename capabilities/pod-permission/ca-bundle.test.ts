import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CaBundle, caBundleFromEnv, parseSecretRef } from "./ca-bundle";

const CERT = (n: string) => `-----BEGIN CERTIFICATE-----\n${n}==\n-----END CERTIFICATE-----\n`;

function bundle(initial: string | Error) {
  const state = { content: initial, now: 0, reads: 0, warnings: [] as string[] };
  const ca = new CaBundle({
    field: "BULWARK_PERMISSION_CA_SECRET",
    ttlMs: 1000,
    now: () => state.now,
    read: async () => {
      state.reads++;
      if (state.content instanceof Error) throw state.content;
      return state.content;
    },
    warn: problem => state.warnings.push(problem),
  });
  return { ca, state };
}

const settle = () => new Promise(r => setImmediate(r));

describe("CaBundle", () => {
  it("given no source, returns no bundle", async () => {
    assert.equal(await new CaBundle(undefined).current(), undefined);
  });

  it("given a renewed CA, returns it once stale and re-read, the cached one until then", async () => {
    const { ca, state } = bundle(CERT("AA"));
    assert.equal(await ca.current(), CERT("AA"));
    state.content = CERT("BB");
    state.now = 999;
    assert.equal(await ca.current(), CERT("AA"));
    assert.equal(state.reads, 1);
    state.now = 1000;
    assert.equal(await ca.current(), CERT("AA"), "stale: served while it refreshes");
    await settle();
    assert.equal(await ca.current(), CERT("BB"));
    assert.equal(state.reads, 2);
  });

  it("given a source that goes missing or bad, keeps the last good bundle and warns once per problem", async () => {
    const { ca, state } = bundle(CERT("AA"));
    await ca.current();
    state.content = new Error("Secret bulwark-system/tls has no ca.crt");
    for (const t of [1000, 2000]) {
      state.now = t;
      await ca.current();
      await settle();
    }
    state.content = "not pem";
    state.now = 3000;
    await ca.current();
    await settle();
    assert.equal(await ca.current(), CERT("AA"));
    assert.deepEqual(state.warnings, [
      "BULWARK_PERMISSION_CA_SECRET: Secret bulwark-system/tls has no ca.crt",
      "BULWARK_PERMISSION_CA_SECRET: must hold PEM certificates (-----BEGIN CERTIFICATE-----)",
    ]);
  });

  it("given a first read that fails, returns no bundle (and tries again once stale)", async () => {
    const { ca, state } = bundle(new Error("connection refused"));
    assert.equal(await ca.current(), undefined);
    state.content = CERT("AA");
    state.now = 1000;
    assert.equal(await ca.current(), CERT("AA"));
  });
});

describe("caBundleFromEnv and parseSecretRef", () => {
  it("given NAMESPACE/NAME, returns the ref; anything else, a message naming the variable", () => {
    assert.deepEqual(parseSecretRef("bulwark-system/bulwark-permission-server-tls"), {
      namespace: "bulwark-system",
      name: "bulwark-permission-server-tls",
    });
    assert.equal(
      parseSecretRef("bulwark-permission-server-tls"),
      'BULWARK_PERMISSION_CA_SECRET must be NAMESPACE/NAME of the serving Secret; got "bulwark-permission-server-tls"',
    );
  });

  it("given both a Secret and a file, refuses", () => {
    assert.throws(
      () =>
        caBundleFromEnv({
          BULWARK_PERMISSION_CA_SECRET: "a/b",
          BULWARK_PERMISSION_CA_PATH: "/ca.crt",
        }),
      /BULWARK_PERMISSION_CA_SECRET and BULWARK_PERMISSION_CA_PATH are both set; set one/,
    );
  });
});
