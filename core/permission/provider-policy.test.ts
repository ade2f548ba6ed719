import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  globMatches,
  labelSelectorSchema,
  selectorMatches,
  type LabelSelector,
} from "./provider-policy";
import { parsePermissionGroupSpec, parsePermissionProviderSpec, providerInfo } from "./spec";
import { shortStrings } from "../../test/harness/generate";

describe("selectorMatches (metav1.LabelSelector semantics)", () => {
  const labels = { team: "payments", env: "prod" };
  const cases: [string, LabelSelector, boolean][] = [
    ["an empty selector", {}, true],
    ["a matching label", { matchLabels: { team: "payments" } }, true],
    ["a label with another value", { matchLabels: { team: "search" } }, false],
    ["a missing label", { matchLabels: { tier: "db" } }, false],
    [
      "In",
      { matchExpressions: [{ key: "env", operator: "In", values: ["prod", "staging"] }] },
      true,
    ],
    [
      "In, the key missing",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["db"] }] },
      false,
    ],
    ["NotIn", { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] }, false],
    [
      "NotIn, the key missing",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] },
      true,
    ],
    ["Exists", { matchExpressions: [{ key: "team", operator: "Exists" }] }, true],
    ["DoesNotExist", { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] }, false],
    [
      "labels and expressions together (all must hold)",
      {
        matchLabels: { team: "payments" },
        matchExpressions: [{ key: "env", operator: "In", values: ["dev"] }],
      },
      false,
    ],
  ];
  for (const [title, selector, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () =>
      assert.equal(selectorMatches(selector, labels), expected));
  }

  it("refuses In without values and Exists with values, as apimachinery does", () => {
    const bad = labelSelectorSchema.safeParse({
      matchExpressions: [
        { key: "a", operator: "In", values: [] },
        { key: "b", operator: "Exists", values: ["x"] },
      ],
    });
    assert.ok(!bad.success);
    assert.deepEqual(
      bad.error.issues.map(i => [i.path.join("."), i.message]),
      [
        ["matchExpressions.0.values", "must be non-empty when operator is In"],
        ["matchExpressions.1.values", "must be empty when operator is Exists"],
      ],
    );
  });
});

describe("globMatches", () => {
  it("matches '*' against any run, everything else literally", () => {
    assert.ok(globMatches("orders_*", "orders_eu"));
    assert.ok(globMatches("*", "anything"));
    assert.ok(!globMatches("orders_*", "billing"));
    assert.ok(!globMatches("orders.v1", "ordersXv1"), "a dot is a dot");
    assert.ok(globMatches("kafka:topic/*", "kafka:topic/payments"));
  });

  it("agrees with the glob as a regular expression on every short glob and value", () => {
    const asRegex = (glob: string) =>
      new RegExp(`^${glob.split("*").map(escapeRegex).join(".*")}$`);
    const globs = [...shortStrings(["a", "b", "*", "."], 5)];
    const values = [...shortStrings(["a", "b", "."], 6)];
    for (const glob of globs) {
      const regex = asRegex(glob);
      for (const value of values) {
        assert.equal(globMatches(glob, value), regex.test(value), `${glob} on ${value}`);
      }
    }
  });

  it("fails a hostile value against a glob of many stars at once", () => {
    // As a regular expression this took six minutes (backtracking once per star).
    assert.equal(globMatches("*a*a*a*a*a*a*b", "a".repeat(120)), false);
    assert.equal(globMatches("*-*-*-*-*-*-*-*-x", `${"-".repeat(252)}y`), false);
    assert.equal(globMatches("*a*a*a*a*a*a*b", `${"a".repeat(120)}b`), true);
  });
});

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

describe("a provider's policy, where a group is resolved", () => {
  const provider = parsePermissionProviderSpec({
    type: "mysql",
    address: "db.example.com",
    credentialsSecretRef: { namespace: "bulwark-system", name: "db" },
    namespaceSelector: { matchLabels: { team: "payments" } },
    allowedParams: { databases: ["orders_*"] },
  });
  assert.ok(provider.ok);
  const providers = new Map([["payments-db", providerInfo(provider.value)]]);
  const group = (database: string) => ({
    permissions: [
      { name: "read", provider: "payments-db", params: { database, privileges: ["SELECT"] } },
    ],
  });
  const payments = { name: "payments", labels: { team: "payments" } };

  it("resolves a group in a selected namespace naming an allowed database", () => {
    assert.ok(parsePermissionGroupSpec(group("orders_eu"), providers, payments).ok);
  });

  it("refuses a group in another namespace, naming the provider field", () => {
    const result = parsePermissionGroupSpec(group("orders_eu"), providers, {
      name: "tenant-a",
      labels: {},
    });
    assert.ok(!result.ok);
    assert.equal(result.errors[0]?.field, "spec.permissions[0].provider");
    assert.match(
      result.errors[0]!.message,
      /may not be used in namespace tenant-a: .*namespaceSelector/,
    );
  });

  it("refuses a database outside allowedParams, naming the params field", () => {
    const result = parsePermissionGroupSpec(group("billing"), providers, payments);
    assert.ok(!result.ok);
    assert.equal(result.errors[0]?.field, "spec.permissions[0].params.database");
    assert.match(
      result.errors[0]!.message,
      /"billing" is not allowed by provider "payments-db" \(spec.allowedParams: orders_\*\)/,
    );
  });
});
