import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_PATTERN,
  MAX_PERMISSIONS,
  PROVIDER_TYPES,
} from "../../core/permission";
import {
  permissionCrd,
  permissionGroupSpecSchema,
  permissionProviderSpecSchema,
  READY_CONDITION,
} from "./permission-crds";

type Schema = {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  default?: unknown;
  enum?: unknown[];
  pattern?: string;
  maxItems?: number;
  additionalProperties?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
};

function versionOf(kind: "group" | "provider" | "grant") {
  const version = permissionCrd(kind).spec.versions[0];
  assert.ok(version);
  return version;
}

function specOf(kind: "group" | "provider"): Schema {
  const spec: Schema | undefined = versionOf(kind).schema.openAPIV3Schema.properties.spec;
  assert.ok(spec);
  return spec;
}

/** Every node of a structural schema names its type and has no additionalProperties beside properties. */
function structuralProblems(schema: Schema, path: string): string[] {
  const problems: string[] = [];
  if (!schema.type) problems.push(`${path}: no type`);
  if (schema.properties && schema.additionalProperties !== undefined) {
    problems.push(`${path}: additionalProperties beside properties`);
  }
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${key}`));
  }
  if (schema.items) problems.push(...structuralProblems(schema.items, `${path}[]`));
  return problems;
}

describe("permissionCrd: names and scope", () => {
  const cases: ["group" | "provider", string, string, string, string][] = [
    ["group", "permissiongroups.bulwark.dev", "PermissionGroup", "Namespaced", "pg"],
    ["provider", "permissionproviders.bulwark.dev", "PermissionProvider", "Cluster", "pp"],
  ];
  for (const [kind, name, kindName, scope, shortName] of cases) {
    it(`given ${kind}, returns ${name}, ${scope}, short name ${shortName}, v1alpha1 with a status subresource`, () => {
      const crd = permissionCrd(kind);
      assert.equal(crd.metadata.name, name);
      assert.equal(crd.spec.group, "bulwark.dev");
      assert.equal(crd.spec.scope, scope);
      assert.equal(crd.spec.names.kind, kindName);
      assert.deepEqual(crd.spec.names.shortNames, [shortName]);
      assert.equal(versionOf(kind).name, "v1alpha1");
      assert.deepEqual(versionOf(kind).subresources, { status: {} });
    });

    it(`given ${kind}, returns a structural schema`, () => {
      assert.deepEqual(
        structuralProblems(versionOf(kind).schema.openAPIV3Schema, "openAPIV3Schema"),
        [],
      );
    });

    it(`given ${kind}, returns a Ready printer column and an Age column last`, () => {
      const columns = versionOf(kind).additionalPrinterColumns;
      const ready = columns.find(c => c.name === "Ready");
      assert.equal(ready?.jsonPath, `.status.conditions[?(@.type=="${READY_CONDITION}")].status`);
      assert.equal(columns.at(-1)?.name, "Age");
    });
  }
});

describe("permissionCrd: the PermissionGrant ledger", () => {
  it("is namespaced, structural, and its columns show the pod, its IPs and permissions", () => {
    const crd = permissionCrd("grant");
    assert.equal(crd.metadata.name, "permissiongrants.bulwark.dev");
    assert.equal(crd.spec.scope, "Namespaced");
    const version = versionOf("grant");
    assert.deepEqual(structuralProblems(version.schema.openAPIV3Schema, "openAPIV3Schema"), []);
    assert.deepEqual(
      version.additionalPrinterColumns.map(c => c.name),
      ["Namespace", "Pod", "IP", "Permissions", "Age"],
    );
    const spec = version.schema.openAPIV3Schema.properties.spec as Schema;
    assert.deepEqual(Object.keys(spec.properties ?? {}), ["pod", "group", "entries"]);
  });
});

describe("permissionCrd: group schema", () => {
  const permissions = specOf("group").properties?.permissions;
  const item = permissions?.items?.properties;

  it("given the group, returns params as a schemaless object (validated per provider type in zod)", () => {
    assert.deepEqual(item?.params, {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
      description: item?.params?.description,
    });
  });

  it("given the group, returns the same name patterns and limit as the zod schema", () => {
    assert.equal(item?.name?.pattern, DNS_LABEL_PATTERN.source);
    assert.equal(item?.provider?.pattern, DNS_SUBDOMAIN_PATTERN.source);
    assert.equal(permissions?.maxItems, MAX_PERMISSIONS);
  });

  it("given a group without registerWithCmdb, returns the CRD's default and zod's default alike", () => {
    const parsed = permissionGroupSpecSchema.parse({
      permissions: [{ name: "a", provider: "p", params: {} }],
    });
    assert.equal(specOf("group").properties?.registerWithCmdb?.default, parsed.registerWithCmdb);
  });
});

describe("permissionCrd: provider schema", () => {
  const props = specOf("provider").properties ?? {};

  it("given the provider, returns the provider types as the type enum", () => {
    assert.deepEqual(props.type?.enum, [...PROVIDER_TYPES]);
  });

  it("given a minimal provider, returns the CRD's defaults and zod's defaults alike", () => {
    const parsed = permissionProviderSpecSchema.parse({ type: "http", address: "https://authz" });
    assert.equal(props.timeoutSeconds?.default, parsed.timeoutSeconds);
    assert.equal(props.concurrency?.default, parsed.concurrency);
    assert.deepEqual(props.rateLimit?.default, {});
    assert.equal(props.rateLimit?.properties?.qps?.default, parsed.rateLimit.qps);
    assert.equal(props.rateLimit?.properties?.burst?.default, parsed.rateLimit.burst);
  });

  it("given the provider, returns a CEL rule that a mysql provider names its credentials", () => {
    const spec = versionOf("provider").schema.openAPIV3Schema.properties.spec;
    const rules = "x-kubernetes-validations" in spec ? spec["x-kubernetes-validations"] : [];
    assert.deepEqual(
      rules.map(r => r.rule),
      ["self.type != 'mysql' || has(self.credentialsSecretRef)"],
    );
  });
});
