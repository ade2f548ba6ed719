import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startAuthzApi, type AuthzApi } from "../../test/harness/authz-api";
import { buildProvider, secretValues } from "./registry";
import type { GrantRequest } from "./types";

const never = new AbortController().signal;

function request(i: number): GrantRequest {
  return {
    podUid: `uid-${i}`,
    namespace: "shop",
    pod: `web-${i}`,
    ip: `10.9.0.${i}`,
    group: "orders",
    params: { resource: "orders-db", action: "read" },
  };
}

const mysqlSecret = { username: "admin", password: "pw", podUser: "app", podPassword: "app-pw" };
const mysqlSpec = {
  type: "mysql",
  address: "db.example:3306",
  credentialsSecretRef: { namespace: "bulwark", name: "shop-db" },
};

describe("buildProvider", () => {
  let api: AuthzApi;
  before(async () => {
    api = await startAuthzApi({ token: "t0k" });
  });
  after(() => api.close());

  it("builds an http provider whose calls keep within the spec's rate limit at the API", async () => {
    const built = buildProvider(
      {
        metadata: { name: "authz" },
        spec: {
          type: "http",
          address: api.url,
          credentialsSecretRef: { namespace: "bulwark", name: "authz" },
          rateLimit: { qps: 4, burst: 10 },
          concurrency: 2,
        },
      },
      { token: "t0k" },
    );
    assert.ok(built.ok, JSON.stringify(!built.ok && built.errors));
    const provider = built.value;
    // The stand-in refuses (429) anything above 4 requests in a sliding second: none may come.
    api.configure({ rateLimitQps: 4 });
    assert.equal(provider.type, "http");
    assert.equal(provider.spec.timeoutSeconds, 5);
    const states = await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map(i => provider.grant(request(i), never)),
    );
    assert.ok(states.every(s => s.state === "granted"));
    assert.ok(api.stats().peakQps <= 4, `peak ${api.stats().peakQps}`);
    assert.equal(api.stats().byStatus[429], undefined);
    assert.equal(provider.limiter.stats().started, 9);
    await provider.revoke({ ...request(1), stillHeld: async () => [] }, never);
    assert.equal(api.isGranted("10.9.0.1", "orders-db"), false);
    await provider.close();
    await assert.rejects(provider.grant(request(2), never), /closed/);
  });

  it("splits the limit between replicas with `share`", () => {
    const built = buildProvider(
      {
        metadata: { name: "authz" },
        spec: { type: "http", address: api.url, rateLimit: { qps: 10, burst: 20 }, concurrency: 4 },
      },
      undefined,
      { share: 1 / 3 },
    );
    assert.ok(built.ok);
    const { limiter } = built.value;
    assert.equal(limiter.windowLimit, 3);
    assert.equal(limiter.concurrency, 1);
    void built.value.close();
  });

  it("builds a mysql provider from its Secret's values", async () => {
    const built = buildProvider({ metadata: { name: "shop-db" }, spec: mysqlSpec }, mysqlSecret);
    assert.ok(built.ok);
    assert.equal(built.value.type, "mysql");
    assert.equal(built.value.name, "shop-db");
    await built.value.close();
  });

  it("names the field of every problem", () => {
    const cases: [Parameters<typeof buildProvider>, string[]][] = [
      [[{ spec: mysqlSpec }, mysqlSecret], ["metadata.name"]],
      [
        [{ metadata: { name: "x" }, spec: { ...mysqlSpec, rateLimit: { qps: 0 } } }, mysqlSecret],
        ["spec.rateLimit.qps"],
      ],
      [
        [{ metadata: { name: "x" }, spec: { ...mysqlSpec, address: "db:99999" } }, mysqlSecret],
        ["spec.address"],
      ],
      [[{ metadata: { name: "x" }, spec: mysqlSpec }, undefined], ["Secret bulwark/shop-db"]],
      [
        [
          { metadata: { name: "x" }, spec: mysqlSpec },
          { username: "a", password: "b" },
        ],
        ["Secret bulwark/shop-db data.podUser", "Secret bulwark/shop-db data.podPassword"],
      ],
      [
        [
          {
            metadata: { name: "x" },
            spec: {
              type: "http",
              address: "http://a",
              credentialsSecretRef: { namespace: "n", name: "s" },
            },
          },
          { username: "u" },
        ],
        ["Secret n/s data.password"],
      ],
    ];
    for (const [args, fields] of cases) {
      const built = buildProvider(...args);
      assert.equal(built.ok, false, JSON.stringify(args));
      assert.deepEqual(!built.ok && built.errors.map(e => e.field), fields);
    }
  });
});

describe("secretValues", () => {
  it("decodes data and lets stringData win", () => {
    const values = secretValues({
      data: {
        token: Buffer.from("abc").toString("base64"),
        user: Buffer.from("u").toString("base64"),
      },
      stringData: { user: "v" },
    });
    assert.deepEqual(values, { token: "abc", user: "v" });
    assert.equal(secretValues(undefined), undefined);
  });
});
