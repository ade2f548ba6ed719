import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ANNOTATION_REGISTRY, lookupAnnotation, type AnnotatedKind } from "./registry";
import { annotationKey } from "./validators";
import { BULWARK_INGRESS_ANNOTATION_PREFIX, NGINX_ANNOTATION_PREFIX } from "../names";

describe("ANNOTATION_REGISTRY", () => {
  it("given every entry, returns distinct keys under the prefix with a one-line doc", () => {
    const keys = ANNOTATION_REGISTRY.map(a => a.key);
    assert.equal(new Set(keys).size, keys.length);
    for (const info of ANNOTATION_REGISTRY) {
      const prefixed =
        info.key.startsWith(NGINX_ANNOTATION_PREFIX) ||
        info.key.startsWith(BULWARK_INGRESS_ANNOTATION_PREFIX);
      assert.ok(prefixed, info.key);
      assert.ok(info.doc.length > 10 && !info.doc.includes("\n"), info.key);
    }
  });

  // The names DESIGN.md fixes ("Names that are fixed"), each on the kind of object that carries it.
  const fixed: [string, string, AnnotatedKind[]][] = [
    ["canary", "canary", ["Ingress"]],
    ["canary-by-header", "canary", ["Ingress"]],
    ["canary-by-header-value", "canary", ["Ingress"]],
    ["canary-by-header-pattern", "canary", ["Ingress"]],
    ["canary-by-cookie", "canary", ["Ingress"]],
    ["canary-weight", "canary", ["Ingress"]],
    ["canary-weight-total", "canary", ["Ingress"]],
    ["canary-by-query", "canary", ["Ingress"]],
    ["canary-mod-divisor", "canary", ["Ingress"]],
    ["canary-request-add-header", "canary", ["Ingress"]],
    ["canary-response-add-header", "canary", ["Ingress"]],
    ["enable-cors", "cors", ["Ingress"]],
    ["cors-allow-origin", "cors", ["Ingress"]],
    ["ssl-redirect", "redirect", ["Ingress"]],
    ["proxy-read-timeout", "proxy", ["Ingress"]],
    ["disable-robots", "robots", ["Ingress"]],
    ["rewrite-target", "rewrite", ["Ingress"]],
    ["ingress-rollout", "ingress-rollout", ["Ingress"]],
    ["ingress-rollout-current-revision", "ingress-rollout", ["Ingress"]],
    ["ingress-rollout-update-revision", "ingress-rollout", ["Ingress"]],
    ["ingress-rollout-index-id", "ingress-rollout", ["Ingress"]],
    ["secret-rollout", "secret-rollout", ["Secret"]],
    ["secret-rollout-index-id", "secret-rollout", ["Secret"]],
    ["version", "version", ["Ingress", "Secret"]],
  ];
  for (const [name, family, kinds] of fixed) {
    it(`given ${name}, returns family ${family} on ${kinds.join(" and ")}`, () => {
      const info = lookupAnnotation(annotationKey(name));
      assert.equal(info?.family, family);
      assert.deepEqual(info?.kinds, kinds);
    });
  }
});
