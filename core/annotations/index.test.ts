import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ANNOTATION_REGISTRY,
  annotationPath,
  parseIngressAnnotations,
  parseSecretAnnotations,
  type IngressAnnotations,
} from "./index";
import { annotationKey } from "./validators";

const NONE: IngressAnnotations = {
  canary: undefined,
  cors: undefined,
  robots: undefined,
  redirect: undefined,
  proxy: undefined,
  rewrite: undefined,
  rollout: undefined,
  version: undefined,
  referrer: undefined,
  sourceRange: undefined,
  rateLimit: undefined,
  upstream: undefined,
  urlRedirect: undefined,
  hostNames: undefined,
  errorPages: undefined,
  buffering: undefined,
  balancing: undefined,
  affinity: undefined,
  basicAuth: undefined,
  externalAuth: undefined,
  http2: undefined,
};

describe("parseIngressAnnotations", () => {
  it("given no annotations, returns every family undefined", () => {
    assert.deepEqual(parseIngressAnnotations(undefined), { ok: true, value: NONE, warnings: [] });
  });

  it("given only foreign annotations, returns every family undefined and no warning", () => {
    const result = parseIngressAnnotations({ "kubernetes.io/ingress.class": "nginx", canary: "x" });
    assert.deepEqual(result, { ok: true, value: NONE, warnings: [] });
  });

  it("given valid annotations of several families, returns each family's config", () => {
    const result = parseIngressAnnotations({
      [annotationKey("canary")]: "true",
      [annotationKey("canary-weight")]: "10",
      [annotationKey("disable-robots")]: "true",
      [annotationKey("proxy-read-timeout")]: "30",
      [annotationKey("version")]: "2",
    });
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.equal(result.value.canary?.weight, 10);
    assert.deepEqual(result.value.robots, { disableRobots: true });
    assert.deepEqual(result.value.proxy, { readTimeoutSeconds: 30 });
    assert.equal(result.value.version, 2);
    assert.equal(result.value.cors, undefined);
  });

  it("given malformed values in several families, returns every error at once, and the warnings", () => {
    const result = parseIngressAnnotations({
      [annotationKey("canary")]: "true",
      [annotationKey("canary-weight")]: "abc",
      [annotationKey("enable-cors")]: "yes",
      [annotationKey("proxy-body-size")]: "lots",
      [annotationKey("ingress-rollout-index-id")]: "x",
      [annotationKey("version")]: "v1",
      [annotationKey("no-such-thing")]: "1",
    });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(
      result.errors.map(e => e.field),
      [
        "canary-weight",
        "enable-cors",
        "proxy-body-size",
        "ingress-rollout-index-id",
        "version",
      ].map(name => annotationPath(annotationKey(name))),
    );
    for (const error of result.errors) assert.match(error.message, /^expected .+, got "/);
    assert.equal(result.errors[0]?.message, `expected an integer between 0 and 10000, got "abc"`);
    assert.deepEqual(result.warnings, [
      `unknown annotation "${annotationKey("no-such-thing")}", ignored`,
    ]);
  });

  it("given every Ingress annotation of the registry, returns no unknown-key warning", () => {
    const keys = ANNOTATION_REGISTRY.filter(a => a.kinds.includes("Ingress")).map(a => a.key);
    const result = parseIngressAnnotations(Object.fromEntries(keys.map(k => [k, "?"])));
    assert.equal(result.ok, false, "every value is malformed");
    assert.deepEqual(result.warnings, []);
  });
});

describe("parseSecretAnnotations", () => {
  it("given a Secret's rollout and version, returns both", () => {
    const result = parseSecretAnnotations({
      [annotationKey("secret-rollout")]: "true",
      [annotationKey("secret-rollout-index-id")]: "-1",
      [annotationKey("version")]: "5",
    });
    assert.deepEqual(result, {
      ok: true,
      value: {
        rollout: {
          enabled: true,
          currentRevision: undefined,
          updateRevision: undefined,
          indexId: -1,
        },
        version: 5,
      },
      warnings: [],
    });
  });

  it("given ingress-rollout on a Secret, returns a warning and ignores it", () => {
    const key = annotationKey("ingress-rollout");
    assert.deepEqual(parseSecretAnnotations({ [key]: "true" }), {
      ok: true,
      value: { rollout: undefined, version: undefined },
      warnings: [`annotation "${key}" is read on Ingresses only, ignored on this Secret`],
    });
  });

  it("given a malformed secret-rollout, returns an error naming its key", () => {
    const key = annotationKey("secret-rollout");
    assert.deepEqual(parseSecretAnnotations({ [key]: "yes" }), {
      ok: false,
      errors: [{ field: annotationPath(key), message: `expected "true" or "false", got "yes"` }],
      warnings: [],
    });
  });
});
