import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ANNOTATION_CATALOG,
  catalogEntry,
  ignoredAnnotationWarnings,
  securityControlProblem,
  unsupportedSecurityAnnotations,
} from "./catalog";
import { ANNOTATION_REGISTRY, type AnnotatedKind } from "./registry";
import { annotationKey } from "./validators";

const DOCUMENTED = readFileSync(
  join(__dirname, "..", "..", "test", "fixtures", "ingress-nginx", "documented-annotations.txt"),
  "utf8",
)
  .split("\n")
  .filter(line => line !== "" && !line.startsWith("#"));

describe("the annotation catalog", () => {
  it(`marks every one of the ${DOCUMENTED.length} keys ingress-nginx documents`, () => {
    const missing = DOCUMENTED.filter(name => catalogEntry(annotationKey(name)) === undefined);
    assert.deepEqual(missing, []);
  });

  it("lists every key the families read as supported, and nothing else as supported", () => {
    const supported = ANNOTATION_CATALOG.filter(e => e.support === "supported").map(e => e.key);
    assert.deepEqual(supported.sort(), ANNOTATION_REGISTRY.map(info => info.key).sort());
  });

  it("names the security controls the issue found failing open", () => {
    for (const name of [
      "auth-tls-secret",
      "auth-tls-verify-client",
      "ssl-passthrough",
      "configuration-snippet",
    ]) {
      assert.equal(catalogEntry(annotationKey(name))?.support, "unsupported-security", name);
    }
  });

  it("reads the source ranges, which it once refused", () => {
    for (const name of [
      "allowlist-source-range",
      "whitelist-source-range",
      "denylist-source-range",
    ]) {
      assert.equal(catalogEntry(annotationKey(name))?.support, "supported", name);
    }
  });

  it("reads basic authentication, which it once refused", () => {
    for (const name of ["auth-type", "auth-secret", "auth-secret-type", "auth-realm"]) {
      assert.equal(catalogEntry(annotationKey(name))?.support, "supported", name);
    }
  });

  it("reads the rate and connection limits, which it once refused", () => {
    for (const name of [
      "limit-rps",
      "limit-rpm",
      "limit-burst-multiplier",
      "limit-connections",
      "limit-allowlist",
      "limit-whitelist",
      "limit-rate",
      "limit-rate-after",
    ]) {
      assert.equal(catalogEntry(annotationKey(name))?.support, "supported", name);
    }
  });

  it("gives every entry a type", () => {
    assert.deepEqual(
      ANNOTATION_CATALOG.filter(e => e.type === "").map(e => e.key),
      [],
    );
  });
});

describe("unsupportedSecurityAnnotations / securityControlProblem", () => {
  const annotations = {
    [annotationKey("ssl-passthrough")]: "true",
    [annotationKey("enable-cors")]: "true",
    [annotationKey("affinity")]: "cookie",
    "example.com/auth-url": "x",
  };
  it("returns the security controls only, by full key", () => {
    assert.deepEqual(unsupportedSecurityAnnotations(annotations), [
      annotationKey("ssl-passthrough"),
    ]);
  });
  it("says why each one is refused", () => {
    assert.equal(
      securityControlProblem(annotationKey("ssl-passthrough")),
      "is a security control Bulwark does not implement (TLS passed through to the backend; served without it, TLS would be terminated by the wrong party)",
    );
  });
  it("returns nothing for no annotations", () => {
    assert.deepEqual(unsupportedSecurityAnnotations(undefined), []);
  });
});

describe("ignoredAnnotationWarnings", () => {
  const cases: [string, Record<string, string> | undefined, AnnotatedKind, string[]][] = [
    ["no annotations", undefined, "Ingress", []],
    [
      "known keys and foreign keys",
      { [annotationKey("canary")]: "x", "kubectl.kubernetes.io/x": "y", foo: "z" },
      "Ingress",
      [],
    ],
    [
      "an unknown key under the prefix",
      { [annotationKey("no-such-thing")]: "x" },
      "Ingress",
      [`unknown annotation "${annotationKey("no-such-thing")}", ignored`],
    ],
    [
      "a harmless key Bulwark does not implement",
      { [annotationKey("service-upstream")]: "true" },
      "Ingress",
      [
        `annotation "${annotationKey("service-upstream")}" is not implemented by Bulwark, ignored: balancing over the Service's cluster IP instead of its endpoints; Bulwark balances over the ready endpoints`,
      ],
    ],
    [
      "a security control (refused, not warned about)",
      { [annotationKey("auth-snippet")]: "proxy_set_header A b;" },
      "Ingress",
      [],
    ],
    [
      "a Secret annotation on an Ingress",
      { [annotationKey("secret-rollout")]: "true" },
      "Ingress",
      [
        `annotation "${annotationKey("secret-rollout")}" is read on Secrets only, ignored on this Ingress`,
      ],
    ],
    [
      "an Ingress annotation on a Secret",
      { [annotationKey("enable-cors")]: "true", [annotationKey("version")]: "1" },
      "Secret",
      [
        `annotation "${annotationKey("enable-cors")}" is read on Ingresses only, ignored on this Secret`,
      ],
    ],
  ];
  for (const [title, annotations, kind, expected] of cases) {
    it(`given ${title}, returns ${expected.length} warning(s)`, () => {
      assert.deepEqual(ignoredAnnotationWarnings(annotations, kind), expected);
    });
  }
});
