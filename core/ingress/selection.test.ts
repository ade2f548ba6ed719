import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  countsForChecksum,
  DEFAULT_SCOPE,
  parseExcludedNamespaces,
  selectsIngress,
  selectsSecret,
  type ServingScope,
} from "./selection";
import type { Ingress } from "./types";

function ingress(className?: string, legacy?: string): Ingress {
  return {
    metadata: {
      name: "a",
      namespace: "team",
      annotations: legacy === undefined ? {} : { "kubernetes.io/ingress.class": legacy },
    },
    spec: className === undefined ? {} : { ingressClassName: className },
  };
}

const scope = (classIsDefault: boolean): ServingScope => ({ ...DEFAULT_SCOPE, classIsDefault });

describe("selectsIngress", () => {
  const rows: { title: string; ingress: Ingress; isDefault: boolean; want: boolean }[] = [
    { title: "our class by field", ingress: ingress("bulwark"), isDefault: false, want: true },
    { title: "another class by field", ingress: ingress("nginx"), isDefault: true, want: false },
    {
      title: "our class by the legacy annotation",
      ingress: ingress(undefined, "bulwark"),
      isDefault: false,
      want: true,
    },
    {
      title: "another class by the legacy annotation, even when ours is the default",
      ingress: ingress(undefined, "nginx"),
      isDefault: true,
      want: false,
    },
    {
      title: "the field over the legacy annotation",
      ingress: ingress("nginx", "bulwark"),
      isDefault: true,
      want: false,
    },
    { title: "no class, ours the default", ingress: ingress(), isDefault: true, want: true },
    { title: "no class, ours not the default", ingress: ingress(), isDefault: false, want: false },
    {
      title: "an empty class field, ours the default",
      ingress: ingress(""),
      isDefault: true,
      want: true,
    },
  ];
  for (const row of rows) {
    it(`given ${row.title}, returns ${row.want}`, () =>
      assert.equal(selectsIngress(row.ingress, scope(row.isDefault)), row.want));
  }

  it("leaves out the excluded namespaces, whatever the class", () => {
    const inKubeSystem = {
      ...ingress("bulwark"),
      metadata: { name: "a", namespace: "kube-system" },
    };
    assert.equal(selectsIngress(inKubeSystem, DEFAULT_SCOPE), false);
    assert.equal(
      selectsIngress(inKubeSystem, { ...DEFAULT_SCOPE, excludedNamespaces: new Set() }),
      true,
    );
  });
});

describe("selectsSecret / countsForChecksum", () => {
  const secret = (namespace: string, type: string) => ({
    metadata: { name: "s", namespace },
    type,
  });
  it("counts every TLS Secret outside the excluded namespaces", () => {
    assert.equal(selectsSecret(secret("team", "kubernetes.io/tls"), DEFAULT_SCOPE), true);
    assert.equal(selectsSecret(secret("team", "Opaque"), DEFAULT_SCOPE), false);
    assert.equal(selectsSecret(secret("pepr-system", "kubernetes.io/tls"), DEFAULT_SCOPE), false);
  });
  it("counts a class-less Ingress only while the class is the default", () => {
    assert.equal(countsForChecksum("ingress", ingress(), scope(false)), false);
    assert.equal(countsForChecksum("ingress", ingress(), scope(true)), true);
  });
});

describe("selectsIngress: Tengine's ingress-referrer", () => {
  const marked = (referrer: string): Ingress => ({
    ...ingress("bulwark"),
    metadata: {
      name: "a",
      namespace: "team",
      annotations: { "nginx.ingress.kubernetes.io/ingress-referrer": referrer },
    },
  });
  it("drops an Ingress whose referrer is not in the allow-list, from serving and the checksum", () => {
    const scope = { ...DEFAULT_SCOPE, ingressReferrers: new Set(["cms"]) };
    assert.equal(selectsIngress(marked("cms"), scope), true);
    assert.equal(selectsIngress(marked("blog"), scope), false);
    assert.equal(countsForChecksum("ingress", marked("blog"), scope), false);
    assert.equal(selectsIngress(ingress("bulwark"), scope), true);
  });
});

describe("parseExcludedNamespaces", () => {
  it("given nothing, returns the webhook-skipped namespaces", () => {
    const parsed = parseExcludedNamespaces(undefined);
    assert.deepEqual(parsed.ok && [...parsed.value], ["kube-system", "pepr-system"]);
  });
  it("given a list with spaces, returns the names; given an empty string, returns none", () => {
    const parsed = parseExcludedNamespaces(" kube-system, bulwark-system ,");
    assert.deepEqual(parsed.ok && [...parsed.value], ["kube-system", "bulwark-system"]);
    const none = parseExcludedNamespaces("");
    assert.deepEqual(none.ok && [...none.value], []);
  });
  it("given a name that cannot be a namespace, returns an error naming it", () => {
    assert.deepEqual(parseExcludedNamespaces("kube-system,Team_A"), {
      ok: false,
      errors: [
        {
          field: "excludedNamespaces",
          message: 'expected namespace names separated by ",", got "Team_A"',
        },
      ],
      warnings: [],
    });
  });
});
