import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "./types";
import { reviewIngress } from "./review-ingress";

function ingress(annotations: Record<string, string>, path = "/"): Ingress {
  return {
    metadata: { name: "site-1", namespace: "shop", annotations },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        {
          host: "a.com",
          http: {
            paths: [
              {
                path,
                pathType: "ImplementationSpecific",
                backend: { service: { name: "web", port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

describe("reviewIngress", () => {
  it("given annotation and spec problems together, returns all of them at once", () => {
    const review = reviewIngress(
      ingress(
        {
          "nginx.ingress.kubernetes.io/canary": "true",
          "nginx.ingress.kubernetes.io/canary-weight": "abc",
        },
        "no-slash",
      ),
      () => undefined,
    );
    const fields = review.errors.map(e => e.field);
    assert.ok(
      fields.includes('metadata.annotations["nginx.ingress.kubernetes.io/canary-weight"]'),
      fields.join(),
    );
    assert.ok(fields.includes("spec.rules[0].http.paths[0].path"), fields.join());
  });

  it("given a rewrite-target, treats ImplementationSpecific paths as regular expressions", () => {
    const review = reviewIngress(
      ingress({ "nginx.ingress.kubernetes.io/rewrite-target": "/$1" }, "/(a"),
      () => undefined,
    );
    assert.match(review.errors.map(e => e.message).join(), /not a valid regular expression/);
  });

  it("given an unknown annotation under the prefix, warns and does not reject", () => {
    const review = reviewIngress(
      ingress({ "nginx.ingress.kubernetes.io/made-up": "1" }),
      () => undefined,
    );
    assert.deepEqual(review.errors, []);
    assert.match(review.warnings.join(), /made-up/);
  });
});
