import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDefaultClass, isOurIngress, servesIngress } from "./class";
import type { Ingress } from "./types";

function ingress(className?: string, legacy?: string): Ingress {
  return {
    metadata: {
      name: "a",
      annotations: legacy === undefined ? {} : { "kubernetes.io/ingress.class": legacy },
    },
    spec: className === undefined ? {} : { ingressClassName: className },
  };
}

describe("servesIngress", () => {
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
      assert.equal(servesIngress(row.ingress, row.isDefault), row.want));
  }

  it("leaves the checksummed set (isOurIngress) without classless Ingresses", () => {
    assert.equal(isOurIngress(ingress()), false);
  });
});

describe("isDefaultClass", () => {
  const withAnnotation = (value: string) => ({
    metadata: { annotations: { "ingressclass.kubernetes.io/is-default-class": value } },
  });
  it('given the annotation exactly "true", returns true', () =>
    assert.equal(isDefaultClass(withAnnotation("true")), true));
  it("given another value or no class, returns false", () => {
    assert.equal(isDefaultClass(withAnnotation("True")), false);
    assert.equal(isDefaultClass(withAnnotation("false")), false);
    assert.equal(isDefaultClass({ metadata: {} }), false);
    assert.equal(isDefaultClass(undefined), false);
  });
});
