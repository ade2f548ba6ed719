import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "./types";
import { MAX_INGRESS_PATTERN_INSTRUCTIONS } from "../patterns/linear-regex";
import { validateIngressSpec } from "./validate-spec";

const backend = { service: { name: "web", port: { number: 80 } } };

function ingress(spec: Ingress["spec"]): Ingress {
  return {
    metadata: { name: "site-1", namespace: "shop" },
    spec: { ingressClassName: "bulwark", ...spec },
  };
}

function rule(host: string | undefined, path: Record<string, unknown>) {
  return { host, http: { paths: [{ path: "/", pathType: "Prefix", backend, ...path }] } };
}

describe("validateIngressSpec", () => {
  it("given a well-formed Ingress, returns no errors", () => {
    const report = validateIngressSpec(
      ingress({
        rules: [
          rule("shop.example.com", {}),
          rule("*.example.com", { path: "/api", pathType: "Exact" }),
        ],
        tls: [{ hosts: ["shop.example.com"], secretName: "shop-ecc" }],
      }),
    );
    assert.deepEqual(report, { errors: [], warnings: [] });
  });

  const cases: [string, Ingress["spec"], string, RegExp][] = [
    [
      "an uppercase host",
      { rules: [rule("Shop.example.com", {})] },
      "spec.rules[0].host",
      /lowercase/,
    ],
    [
      "a wildcard in the middle",
      { rules: [rule("a.*.example.com", {})] },
      "spec.rules[0].host",
      /first label/,
    ],
    [
      "a relative path",
      { rules: [rule("a.com", { path: "api" })] },
      "spec.rules[0].http.paths[0].path",
      /start with '\/'/,
    ],
    [
      "a path with a query",
      { rules: [rule("a.com", { path: "/a?b=1" })] },
      "spec.rules[0].http.paths[0].path",
      /'\?'/,
    ],
    [
      "an unknown pathType",
      { rules: [rule("a.com", { pathType: "Regex" })] },
      "spec.rules[0].http.paths[0].pathType",
      /got "Regex"/,
    ],
    [
      "a missing backend",
      { rules: [rule("a.com", { backend: undefined })] },
      "spec.rules[0].http.paths[0].backend",
      /required/,
    ],
    [
      "a resource backend",
      { rules: [rule("a.com", { backend: { resource: { kind: "Bucket", name: "b" } } })] },
      "spec.rules[0].http.paths[0].backend.resource",
      /not served/,
    ],
    [
      "a bad service name",
      { rules: [rule("a.com", { backend: { service: { name: "Web_1", port: { number: 80 } } } })] },
      "spec.rules[0].http.paths[0].backend.service.name",
      /RFC 1035/,
    ],
    [
      "port 0",
      { rules: [rule("a.com", { backend: { service: { name: "web", port: { number: 0 } } } })] },
      "spec.rules[0].http.paths[0].backend.service.port.number",
      /1\.\.65535/,
    ],
    [
      "no port",
      { rules: [rule("a.com", { backend: { service: { name: "web" } } })] },
      "spec.rules[0].http.paths[0].backend.service.port",
      /number .* or a port name/,
    ],
    ["no rules and no default backend", { rules: [] }, "spec", /rules or a defaultBackend/],
    [
      "a TLS entry without a Secret",
      { rules: [rule("a.com", {})], tls: [{ hosts: ["a.com"] }] },
      "spec.tls[0].secretName",
      /required/,
    ],
    [
      "a bad TLS host",
      { rules: [rule("a.com", {})], tls: [{ hosts: ["a..com"], secretName: "s" }] },
      "spec.tls[0].hosts[0]",
      /label ''/,
    ],
    [
      "a bad default backend",
      { defaultBackend: { service: { name: "", port: { number: 80 } } } },
      "spec.defaultBackend.service.name",
      /RFC 1035/,
    ],
  ];
  for (const [title, spec, field, message] of cases) {
    it(`given ${title}, returns an error on ${field}`, () => {
      const { errors } = validateIngressSpec(ingress(spec));
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0]!.field, field);
      assert.match(errors[0]!.message, message);
    });
  }

  it("given the same host, path and pathType twice, names both places", () => {
    const { errors } = validateIngressSpec(
      ingress({ rules: [rule("a.com", {}), rule("a.com", {})] }),
    );
    assert.deepEqual(errors, [
      {
        field: "spec.rules[1].http.paths[0]",
        message: "repeats spec.rules[0].http.paths[0] (same host, path and pathType)",
      },
    ]);
  });

  it("given use-regex and a broken ImplementationSpecific regex, returns the regex error", () => {
    const spec = { rules: [rule("a.com", { path: "/(a", pathType: "ImplementationSpecific" })] };
    assert.deepEqual(validateIngressSpec(ingress(spec)).errors, []);
    const { errors } = validateIngressSpec(ingress(spec), { useRegex: true });
    assert.match(errors[0]?.message ?? "", /not a valid regular expression/);
  });

  it("given use-regex, checks Prefix paths as regular expressions too (the gateway serves them as such), Exact ones not", () => {
    const spec = {
      rules: [
        rule("a.com", { path: "/(a", pathType: "Prefix" }),
        rule("b.com", { path: "/(b", pathType: "Exact" }),
        rule("c.com", { path: "/c(/|$)(.*)", pathType: "Prefix" }),
      ],
    };
    const { errors } = validateIngressSpec(ingress(spec), { useRegex: true });
    assert.deepEqual(
      errors.map(e => e.field),
      ["spec.rules[0].http.paths[0].path"],
    );
    assert.match(errors[0]?.message ?? "", /not a valid regular expression in RE2 syntax/);
  });

  it("given a rewrite-target, checks Exact paths as regular expressions too: the rewrite takes their capture groups", () => {
    const spec = { rules: [rule("b.com", { path: "/(b", pathType: "Exact" })] };
    const { errors } = validateIngressSpec(ingress(spec), { useRegex: true, rewrites: true });
    assert.deepEqual(
      errors.map(e => e.field),
      ["spec.rules[0].http.paths[0].path"],
    );
  });

  it("given use-regex and a path over a pattern's bound, names the path and the bound", () => {
    // The second is over the bound too, but is not compiled: the first spent the budget.
    const path = `/${"[a-z]{1000}".repeat(6)}`;
    const spec = {
      rules: [
        rule("a.com", { path, pathType: "ImplementationSpecific" }),
        rule("b.com", { path, pathType: "ImplementationSpecific" }),
      ],
    };
    const { errors } = validateIngressSpec(ingress(spec), { useRegex: true });
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.field, "spec.rules[0].http.paths[0].path");
    assert.match(
      errors[0]?.message ?? "",
      /^is a regular expression \(use-regex is on\) that compiles to 6004 RE2 instructions, more than the 5000 /,
    );
  });

  it("given use-regex and paths over the Ingress's budget together, names the first path past it and compiles no more", () => {
    // 13 paths of 4 004 instructions: the 13th passes 50 000; the 14th, broken, is not compiled.
    const paths = Array.from({ length: 13 }, (_, k) => ({
      path: `/${k}${"[a-z]{1000}".repeat(4)}`,
      pathType: "ImplementationSpecific",
    }));
    paths.push({ path: "/(broken", pathType: "ImplementationSpecific" });
    const spec = { rules: paths.map((p, k) => rule(`h${k}.a.com`, p)) };
    const { errors } = validateIngressSpec(ingress(spec), { useRegex: true });
    assert.deepEqual(errors, [
      {
        field: "spec.rules[12].http.paths[0].path",
        message: `brings this Ingress's regular expressions to more than ${MAX_INGRESS_PATTERN_INSTRUCTIONS} RE2 instructions together (use-regex is on): every gateway worker keeps them; simplify the paths or split them across Ingresses`,
      },
    ]);
    assert.deepEqual(
      validateIngressSpec(ingress({ rules: spec.rules.slice(0, 12) }), { useRegex: true }).errors,
      [],
    );
  });

  it("given a TLS host without a rule, warns", () => {
    const { errors, warnings } = validateIngressSpec(
      ingress({ rules: [rule("a.com", {})], tls: [{ hosts: ["b.com"], secretName: "s" }] }),
    );
    assert.deepEqual(errors, []);
    assert.match(warnings[0] ?? "", /b\.com has no rule/);
  });
});
