import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "./types";
import { reviewIngress, servingRefusal } from "./review-ingress";

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

describe("reviewIngress: security controls Bulwark does not implement", () => {
  const SNIPPET = "nginx.ingress.kubernetes.io/configuration-snippet";
  it("given configuration-snippet, denies naming the key", () => {
    const review = reviewIngress(ingress({ [SNIPPET]: "deny all;" }), () => undefined);
    assert.deepEqual(
      review.errors.map(e => e.field),
      [`metadata.annotations["${SNIPPET}"]`],
    );
    assert.match(review.errors[0]?.message ?? "", /security control Bulwark does not implement/);
  });

  it("given the migration mode, admits with a warning that the gateway will not serve it", () => {
    const review = reviewIngress(ingress({ [SNIPPET]: "deny all;" }), () => undefined, "warn");
    assert.deepEqual(review.errors, []);
    assert.match(review.warnings.join(), /configuration-snippet .* the gateway will not serve/);
  });

  it("refuses to serve it in both modes (servingRefusal ignores the admission mode)", () => {
    assert.match(
      servingRefusal(ingress({ [SNIPPET]: "deny all;" }), () => undefined) ?? "",
      /configuration-snippet/,
    );
    assert.equal(
      servingRefusal(ingress({}), () => undefined),
      undefined,
    );
  });
});

describe("reviewIngress: canaries", () => {
  it("warns that a canary's non-canary annotations are ignored in favour of its main's", () => {
    const review = reviewIngress(
      ingress({
        "nginx.ingress.kubernetes.io/canary": "True",
        "nginx.ingress.kubernetes.io/canary-weight": "10",
        "nginx.ingress.kubernetes.io/proxy-read-timeout": "5",
      }),
      () => undefined,
    );
    assert.deepEqual(review.errors, []);
    assert.match(review.warnings.join(), /canary's proxy annotations are ignored/);
  });

  it("refuses auth-url's $host on a wildcard host, naming the key; an exact host is fine", () => {
    const wild = ingress({ "nginx.ingress.kubernetes.io/auth-url": "https://$host/oauth2/auth" });
    wild.spec!.rules![0]!.host = "*.a.com";
    const review = reviewIngress(wild, () => undefined);
    assert.deepEqual(
      review.errors.map(e => e.field),
      ['metadata.annotations["nginx.ingress.kubernetes.io/auth-url"]'],
    );
    assert.match(review.errors[0]!.message, /wildcard host, no host/);
    const exact = ingress({ "nginx.ingress.kubernetes.io/auth-url": "https://$host/oauth2/auth" });
    assert.deepEqual(reviewIngress(exact, () => undefined).errors, []);
  });

  it("warns that a canary's own auth-url is ignored: only its main's guards its traffic", () => {
    const review = reviewIngress(
      ingress({
        "nginx.ingress.kubernetes.io/canary": "true",
        "nginx.ingress.kubernetes.io/canary-weight": "10",
        "nginx.ingress.kubernetes.io/auth-url": "http://auth.test/check",
      }),
      () => undefined,
    );
    assert.deepEqual(review.errors, []);
    assert.match(review.warnings.join(), /canary's externalAuth annotations are ignored/);
  });
});
