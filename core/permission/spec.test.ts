import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { FieldError } from "../result";
import {
  httpAddressProblem,
  mysqlAddressProblem,
  parsePermissionGroupSpec,
  parsePermissionProviderSpec,
  PROVIDER_DEFAULTS,
  validatePermissionGroup,
  validatePermissionProvider,
  type ProviderInfo,
} from "./spec";

describe("httpAddressProblem", () => {
  const cases: [string, RegExp | undefined][] = [
    ["https://authz.example.com", undefined],
    ["http://10.0.0.1:8080/api/v1", undefined],
    ["https://[fd00::1]:8443", undefined],
    ["authz.example.com", /absolute http/],
    ["ftp://authz.example.com", /http or https; got "ftp"/],
    ["https://user:secret@authz.example.com", /credentialsSecretRef/],
    ["https://authz.example.com/?token=x", /query/],
    ["https://authz.example.com/#x", /fragment/],
  ];
  for (const [address, expected] of cases) {
    it(`given ${address}, returns ${expected ?? "no problem"}`, () => {
      const problem = httpAddressProblem(address);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? "", expected);
    });
  }
});

describe("mysqlAddressProblem", () => {
  const cases: [string, RegExp | undefined][] = [
    ["mysql.db.svc", undefined],
    ["mysql.db.svc:3306", undefined],
    ["10.0.0.7:3307", undefined],
    ["[fd00::7]:3306", undefined],
    ["mysql:0", /port must be 1..65535; got 0/],
    ["mysql:65536", /port must be 1..65535/],
    ["root@mysql", /host\[:port\]/],
    ["mysql://mysql:3306", /host\[:port\]/],
    ["mysql:3306/orders", /host\[:port\]/],
    ["MySQL.example", /host\[:port\]/],
    ["", /host\[:port\]/],
  ];
  for (const [address, expected] of cases) {
    it(`given ${JSON.stringify(address)}, returns ${expected ?? "no problem"}`, () => {
      const problem = mysqlAddressProblem(address);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? "", expected);
    });
  }
});

const secret = { namespace: "bulwark-system", name: "mysql-grants" };

describe("parsePermissionProviderSpec", () => {
  it("given a minimal http provider, returns it with the defaults applied", () => {
    assert.deepEqual(parsePermissionProviderSpec({ type: "http", address: "https://authz" }), {
      ok: true,
      value: {
        type: "http",
        address: "https://authz",
        timeoutSeconds: PROVIDER_DEFAULTS.timeoutSeconds,
        rateLimit: { ...PROVIDER_DEFAULTS.rateLimit },
        concurrency: PROVIDER_DEFAULTS.concurrency,
      },
      warnings: [],
    });
  });

  it("given a full mysql provider, returns it unchanged", () => {
    const spec = {
      type: "mysql",
      address: "mysql.db:3306",
      credentialsSecretRef: secret,
      timeoutSeconds: 10,
      rateLimit: { qps: 2.5, burst: 5 },
      concurrency: 2,
    };
    assert.deepEqual(parsePermissionProviderSpec(spec), { ok: true, value: spec, warnings: [] });
  });
});

describe("validatePermissionProvider", () => {
  const cases: [string, unknown, FieldError[]][] = [
    ["a valid http provider", { type: "http", address: "https://authz" }, []],
    [
      "an unknown type",
      { type: "ldap", address: "ldap://x" },
      [{ field: "spec.type", message: "must be one of http, mysql" }],
    ],
    [
      "a mysql provider without credentials",
      { type: "mysql", address: "mysql:3306" },
      [{ field: "spec.credentialsSecretRef", message: "is required" }],
    ],
    [
      "a mysql provider with a URL address",
      { type: "mysql", address: "https://mysql", credentialsSecretRef: secret },
      [
        {
          field: "spec.address",
          message:
            'must be host[:port] (a DNS name, an IPv4 address or [IPv6]); got "https://mysql"',
        },
      ],
    ],
    [
      "a Secret reference without a namespace",
      { type: "http", address: "https://authz", credentialsSecretRef: { name: "s" } },
      [{ field: "spec.credentialsSecretRef.namespace", message: "is required" }],
    ],
  ];
  for (const [title, spec, expected] of cases) {
    it(`given ${title}, returns ${expected.length === 0 ? "no errors" : expected.map(e => e.field).join(", ")}`, () => {
      assert.deepEqual(validatePermissionProvider(spec), expected);
    });
  }

  const bounds: [string, Record<string, unknown>, string][] = [
    ["a timeout of 0", { timeoutSeconds: 0 }, "spec.timeoutSeconds"],
    ["a timeout of 1.5", { timeoutSeconds: 1.5 }, "spec.timeoutSeconds"],
    ["a qps of 0", { rateLimit: { qps: 0 } }, "spec.rateLimit.qps"],
    ["a burst of 0", { rateLimit: { burst: 0 } }, "spec.rateLimit.burst"],
    ["a concurrency of 0", { concurrency: 0 }, "spec.concurrency"],
    ["a concurrency of 1000", { concurrency: 1000 }, "spec.concurrency"],
  ];
  for (const [title, extra, field] of bounds) {
    it(`given ${title}, returns an error on ${field}`, () => {
      const errors = validatePermissionProvider({ type: "http", address: "https://a", ...extra });
      assert.deepEqual(
        errors.map(e => e.field),
        [field],
      );
    });
  }
});

const providers = new Map<string, ProviderInfo>([
  ["authz", { type: "http" }],
  ["orders-mysql", { type: "mysql" }],
]);
const readOrders = {
  name: "read-orders",
  provider: "orders-mysql",
  params: { database: "orders", privileges: ["SELECT"] },
};
const callBilling = {
  name: "call-billing",
  provider: "authz",
  params: { resource: "billing", action: "write" },
};

describe("validatePermissionGroup", () => {
  const cases: [string, unknown, FieldError[]][] = [
    ["a valid group", { permissions: [readOrders, callBilling] }, []],
    [
      "an unknown provider",
      { permissions: [readOrders, { ...callBilling, provider: "x" }] },
      [{ field: "spec.permissions[1].provider", message: 'provider "x" does not exist' }],
    ],
    [
      "a bad privilege",
      {
        permissions: [
          {
            ...readOrders,
            params: { database: "orders", privileges: ["SELECT", "INSERT", "DROP DATABASE"] },
          },
        ],
      },
      [
        {
          field: "spec.permissions[0].params.privileges[2]",
          message:
            'must be one of SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES, TRIGGER, CREATE VIEW, SHOW VIEW, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, CREATE ROUTINE, ALTER ROUTINE, EVENT; got "DROP DATABASE"',
        },
      ],
    ],
    [
      "http params on a mysql provider",
      { permissions: [{ ...callBilling, provider: "orders-mysql" }] },
      [
        { field: "spec.permissions[0].params.database", message: "is required" },
        { field: "spec.permissions[0].params.privileges", message: "is required" },
        { field: "spec.permissions[0].params", message: 'Unrecognized keys: "resource", "action"' },
      ],
    ],
    [
      "a repeated permission name",
      {
        permissions: [
          readOrders,
          callBilling,
          { ...callBilling, params: { resource: "b", action: "read" } },
        ],
      },
      [
        {
          field: "spec.permissions[2].name",
          message: 'repeats spec.permissions[1].name ("call-billing")',
        },
      ],
    ],
    [
      "no permissions",
      { permissions: [] },
      [{ field: "spec.permissions", message: "must list at least one permission" }],
    ],
    ["no spec", undefined, [{ field: "spec", message: "is required" }]],
    [
      "a permission without params",
      { permissions: [{ name: "a", provider: "authz" }] },
      [{ field: "spec.permissions[0].params", message: "is required" }],
    ],
    [
      "an upper-case permission name",
      { permissions: [{ ...callBilling, name: "Call" }] },
      [
        {
          field: "spec.permissions[0].name",
          message: "must be lowercase letters, digits and '-' (RFC 1123 label)",
        },
      ],
    ],
    [
      "two problems in two permissions",
      {
        permissions: [
          { ...readOrders, provider: "gone" },
          { ...callBilling, params: { resource: "b", action: "own" } },
        ],
      },
      [
        { field: "spec.permissions[0].provider", message: 'provider "gone" does not exist' },
        {
          field: "spec.permissions[1].params.action",
          message: 'must be one of read, write, admin; got "own"',
        },
      ],
    ],
  ];
  for (const [title, spec, expected] of cases) {
    it(`given ${title}, returns ${expected.length === 0 ? "no errors" : expected.map(e => e.field).join(", ")}`, () => {
      assert.deepEqual(validatePermissionGroup(spec, providers), expected);
    });
  }

  it("given 33 permissions, returns an error naming the limit", () => {
    const permissions = Array.from({ length: 33 }, (_, i) => ({ ...callBilling, name: `p${i}` }));
    assert.deepEqual(validatePermissionGroup({ permissions }, providers), [
      { field: "spec.permissions", message: "must list at most 32 permissions" },
    ]);
  });
});

describe("parsePermissionGroupSpec", () => {
  it("given a valid group, returns each permission typed by its provider, registerWithCmdb defaulted", () => {
    assert.deepEqual(
      parsePermissionGroupSpec({ permissions: [readOrders, callBilling] }, providers),
      {
        ok: true,
        value: {
          registerWithCmdb: false,
          permissions: [
            { ...readOrders, type: "mysql" },
            { ...callBilling, type: "http" },
          ],
        },
        warnings: [],
      },
    );
  });
});
