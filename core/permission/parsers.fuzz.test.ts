// Tenants write PermissionGroups and their pods' annotations; the parsers of what they write (and
// of what Bulwark writes on objects a tenant can edit) get generated values: random JSON built
// from the schemas' own keys, odd strings, deep and long values. Each must answer with a result,
// never a throw (a throw in admission denies with Pepr's "Action failed", in the watcher stops a
// revocation), and every error must name a field.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pick, seededRandom } from "../../test/harness/generate";
import { parseBreaker } from "./breaker";
import { parseCaBundle } from "./ca-bundle";
import { parseClaim } from "./claim";
import { parseGrantRecord } from "./grant-record";
import { parseGrantStatus } from "./grant-status";
import { parseInjectConfig } from "./inject";
import { parseLedgerSpec } from "./ledger";
import { parseEntry } from "./pod-retry";
import {
  parsePermissionGroupSpec,
  parsePermissionProviderSpec,
  providerInfo,
  type ProviderInfo,
} from "./spec";
import type { FieldError, Result } from "../result";

const KEYS = [
  ...["audience", "burst", "caBundle", "concurrency", "entries", "grantedAt", "group", "image"],
  ...["ip", "name", "namespace", "ownNamespace", "params", "permission", "permissions", "pod"],
  ...["provider", "qps", "registerWithCmdb", "serverUrl", "tokenExpirationSeconds", "type", "uid"],
  ...["http", "mysql", "url", "host", "port", "database", "user", "secretRef", "key", "grant"],
  ...["namespaceSelector", "allowedParams", "matchLabels", "matchExpressions", "operator"],
  ...[
    "values",
    "timeoutSeconds",
    "retries",
    "until",
    "failures",
    "openUntil",
    "state",
    "__proto__",
  ],
];
const STRINGS = [
  ...[
    "",
    " ",
    "a",
    "http",
    "mysql",
    "https://authz.example/grant",
    "http://[::1]:80/x",
    "10.0.0.1",
  ],
  ...["shop", "Shop", "-", "a".repeat(64), "x".repeat(70_000), "\u0000", "é", "%00", "${x}"],
  ...["1", "-1", "1e309", "NaN", "true", "null", "{}", "[]", '{"a":1}', "2026-12-07T12:00:00Z"],
  ...["*", "a*b*", "In", "NotIn", "Exists", "constructor", "toString", "__proto__"],
];
const NUMBERS = [
  0,
  1,
  -1,
  0.5,
  3,
  65_535,
  65_536,
  Infinity,
  -Infinity,
  Number.MAX_SAFE_INTEGER,
  NaN,
];

function value(random: () => number, depth: number): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.3) return pick(random, STRINGS);
  if (roll < 0.45) return pick(random, NUMBERS);
  if (roll < 0.5) return pick(random, [true, false, null, undefined]);
  if (roll < 0.7)
    return Array.from({ length: Math.floor(random() * 4) }, () => value(random, depth + 1));
  const object: Record<string, unknown> = {};
  const count = Math.floor(random() * 5);
  for (let k = 0; k < count; k++) object[pick(random, KEYS)] = value(random, depth + 1);
  return object;
}

// Valid objects to mutate: random JSON alone never gets past the top-level shape.
const PROVIDER_SEEDS = [
  { type: "http", address: "https://authz.example/grant" },
  {
    type: "mysql",
    address: "db.example.com:3306",
    credentialsSecretRef: { namespace: "bulwark-system", name: "db" },
    namespaceSelector: {
      matchLabels: { team: "a" },
      matchExpressions: [{ key: "team", operator: "In", values: ["a", "b"] }],
    },
    allowedParams: { databases: ["orders_*"] },
    timeoutSeconds: 10,
    rateLimit: { qps: 2.5, burst: 5 },
    concurrency: 2,
  },
];
const GROUP_SEED = {
  permissions: [
    { name: "read", provider: "db", params: { database: "orders_eu", privileges: ["SELECT"] } },
    { name: "bill", provider: "authz", params: { resource: "billing", action: "write" } },
  ],
  registerWithCmdb: true,
};

/** `seed` with one to three leaves replaced, keys added or removed. */
function mutated(random: () => number, seed: unknown): unknown {
  const copy = structuredClone(seed) as Record<string, unknown>;
  for (let m = 0; m < 1 + Math.floor(random() * 3); m++) {
    let at: Record<string, unknown> = copy;
    for (;;) {
      const keys = Object.keys(at);
      if (keys.length === 0) break;
      const key = pick(random, keys);
      const next = at[key];
      if (next !== null && typeof next === "object" && random() < 0.6) {
        at = next as Record<string, unknown>;
        continue;
      }
      const roll = random();
      if (roll < 0.2) delete at[key];
      else if (roll < 0.3) at[pick(random, KEYS)] = value(random, 2);
      else at[key] = value(random, 2);
      break;
    }
  }
  return copy;
}

/** Random JSON as a string, or a random string: what an annotation holds. */
function annotation(random: () => number): string {
  return random() < 0.6 ? (JSON.stringify(value(random, 0)) ?? "") : pick(random, STRINGS);
}

function assertNamed(result: Result<unknown>, what: string): void {
  if (result.ok) return;
  for (const error of result.errors as FieldError[])
    assert.ok(typeof error.field === "string" && error.message.length > 0, what);
}

describe("permission parsers: generated input", () => {
  it("answer 20 000 generated values each with a result, never a throw", () => {
    const random = seededRandom(20261207);
    const providers = new Map<string, ProviderInfo>([
      ["authz", { type: "http" }],
      ["db", { type: "mysql" }],
    ]);
    let accepted = 0;
    let resolved = 0;
    for (let n = 0; n < 20_000; n++) {
      const raw = value(random, 0);
      const providerSpec = random() < 0.7 ? mutated(random, pick(random, PROVIDER_SEEDS)) : raw;
      const groupSpec = random() < 0.7 ? mutated(random, GROUP_SEED) : raw;
      const text = annotation(random);
      const uid = pick(random, ["u-1", "", "x".repeat(300)]);
      const namespace = { name: "shop", labels: { team: pick(random, ["a", "b"]) } };
      const provider = parsePermissionProviderSpec(providerSpec);
      assertNamed(provider, "provider");
      if (provider.ok)
        providers.set(pick(random, ["authz", "db", "other"]), providerInfo(provider.value));
      const group = parsePermissionGroupSpec(groupSpec, providers, namespace);
      assertNamed(group, "group");
      if (group.ok) resolved++;
      if (provider.ok) accepted++;
      assertNamed(parseInjectConfig(raw), "inject");
      assertNamed(parseLedgerSpec(raw), "ledger");
      assertNamed(parseBreaker(text, uid), "breaker");
      assertNamed(parseGrantRecord(text), "grant record");
      assertNamed(parseCaBundle(text, "spec.caBundle"), "CA bundle");
      parseClaim(text);
      parseGrantStatus(text);
      parseEntry(text, uid);
    }
    // The mutations keep many inputs valid, so the parsers' deeper checks run too.
    assert.ok(accepted > 1_000 && resolved > 100, `providers ${accepted}, groups ${resolved}`);
  });
});
