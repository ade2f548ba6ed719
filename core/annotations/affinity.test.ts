import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_AFFINITY_COOKIE, parseAffinity } from "./affinity";
import { annotationPath } from "./family";
import { parseIngressAnnotations } from "./index";
import { annotationKey } from "./validators";

const key = annotationKey;
const AFFINITY = key("affinity");

describe("parseAffinity", () => {
  it("given no annotation of the family, gives undefined", () => {
    assert.deepEqual(parseAffinity({}), { ok: true, value: undefined, warnings: [] });
  });

  it("given ingress-nginx's example (docs/examples/affinity/cookie/ingress.yaml), reads every setting", () => {
    const result = parseAffinity({
      [AFFINITY]: "cookie",
      [key("session-cookie-name")]: "route",
      [key("session-cookie-expires")]: "172800",
      [key("session-cookie-max-age")]: "172800",
    });
    assert.deepEqual(result, {
      ok: true,
      value: {
        cookie: {
          mode: "balanced",
          name: "route",
          path: undefined,
          domain: undefined,
          sameSite: undefined,
          conditionalSameSiteNone: false,
          secure: false,
          maxAge: 172800,
          expires: 172800,
          changeOnFailure: false,
        },
        canaryBehavior: "sticky",
      },
      warnings: [],
    });
  });

  it("given ingress-nginx's SameSite=None example, reads secure, samesite and the conditional", () => {
    const result = parseAffinity({
      [AFFINITY]: "cookie",
      [key("session-cookie-name")]: "SSNONE",
      [key("session-cookie-secure")]: "true",
      [key("session-cookie-samesite")]: "None",
      [key("session-cookie-conditional-samesite-none")]: "true",
    });
    assert.ok(result.ok);
    const cookie = result.value?.cookie;
    assert.equal(cookie?.secure, true);
    assert.equal(cookie?.sameSite, "None");
    assert.equal(cookie?.conditionalSameSiteNone, true);
  });

  it("given the settings of ingress-nginx's parser test, reads them all", () => {
    const result = parseAffinity({
      [AFFINITY]: "cookie",
      [key("affinity-mode")]: "balanced",
      [key("session-cookie-name")]: "INGRESSCOOKIE",
      [key("session-cookie-expires")]: "4500",
      [key("session-cookie-max-age")]: "3000",
      [key("session-cookie-path")]: "/foo",
      [key("session-cookie-domain")]: "foo.bar",
      [key("session-cookie-samesite")]: "Strict",
      [key("session-cookie-change-on-failure")]: "true",
      [key("session-cookie-secure")]: "true",
    });
    assert.ok(result.ok);
    assert.deepEqual(result.value?.cookie, {
      mode: "balanced",
      name: "INGRESSCOOKIE",
      path: "/foo",
      domain: "foo.bar",
      sameSite: "Strict",
      conditionalSameSiteNone: false,
      secure: true,
      maxAge: 3000,
      expires: 4500,
      changeOnFailure: true,
    });
  });

  it("defaults: balanced, INGRESSCOOKIE, no Path (the route's), sticky canaries", () => {
    const result = parseAffinity({ [AFFINITY]: " cookie " });
    assert.ok(result.ok);
    assert.equal(result.value?.cookie?.mode, "balanced");
    assert.equal(result.value?.cookie?.name, DEFAULT_AFFINITY_COOKIE);
    assert.equal(result.value?.cookie?.path, undefined);
    assert.equal(result.value?.canaryBehavior, "sticky");
  });

  it("given persistent mode and legacy canary behaviour, reads them", () => {
    const result = parseAffinity({
      [AFFINITY]: "cookie",
      [key("affinity-mode")]: "persistent",
      [key("affinity-canary-behavior")]: "legacy",
    });
    assert.ok(result.ok);
    assert.equal(result.value?.cookie?.mode, "persistent");
    assert.equal(result.value?.canaryBehavior, "legacy");
  });

  it("reads SameSite in any case, written as browsers know it", () => {
    const spellings: [string, string][] = [
      ["none", "None"],
      ["LAX", "Lax"],
      [" strict ", "Strict"],
    ];
    for (const [raw, written] of spellings) {
      const result = parseAffinity({ [AFFINITY]: "cookie", [key("session-cookie-samesite")]: raw });
      assert.ok(result.ok, raw);
      assert.equal(result.value?.cookie?.sameSite, written);
    }
  });

  const refusals: [string, string, RegExp][] = [
    ["affinity", "Cookie", /expected "cookie", got "Cookie"/],
    ["affinity", "ip_hash", /expected "cookie"/],
    ["affinity", "", /expected "cookie"/],
    ["affinity-mode", "sticky", /expected "balanced" or "persistent"/],
    ["affinity-mode", "Persistent", /expected "balanced" or "persistent"/],
    ["affinity-canary-behavior", "always", /expected "sticky" or "legacy"/],
    ["session-cookie-name", "a b", /expected a cookie name/],
    ["session-cookie-name", "x;Domain=evil.com", /expected a cookie name/],
    ["session-cookie-name", "ns/name", /expected a cookie name/],
    ["session-cookie-name", "", /expected a cookie name/],
    ["session-cookie-path", "foo", /expected a path starting with "\/"/],
    ["session-cookie-path", "/a; Domain=evil.com", /expected a path/],
    ["session-cookie-path", "/a\r\nSet-Cookie: x=1", /expected a path/],
    ["session-cookie-domain", "evil.com; Secure", /expected a domain name/],
    ["session-cookie-domain", "-a.com", /expected a domain name/],
    ["session-cookie-samesite", "Sometimes", /expected "None" or "Lax" or "Strict"/],
    ["session-cookie-secure", "yes", /expected "true" or "false"/],
    ["session-cookie-conditional-samesite-none", "on", /expected "true" or "false"/],
    ["session-cookie-change-on-failure", "maybe", /expected "true" or "false"/],
    ["session-cookie-max-age", "48h", /expected an integer number of seconds/],
    ["session-cookie-max-age", "+5", /expected an integer number of seconds/],
    ["session-cookie-max-age", "abc12", /expected an integer number of seconds/],
    ["session-cookie-max-age", "99999999999", /expected an integer number of seconds/],
    ["session-cookie-expires", "1.5", /expected an integer number of seconds/],
    ["session-cookie-expires", "007", /expected an integer number of seconds/],
  ];
  for (const [name, raw, message] of refusals) {
    it(`refuses ${name} ${JSON.stringify(raw)} naming the key`, () => {
      const result = parseAffinity({ [AFFINITY]: "cookie", [key(name)]: raw });
      assert.ok(!result.ok);
      assert.equal(result.errors[0]?.field, annotationPath(key(name)));
      assert.match(result.errors[0]!.message, message);
    });
  }

  it("reads 0 and negative seconds as ingress-nginx's regex allows", () => {
    const result = parseAffinity({
      [AFFINITY]: "cookie",
      [key("session-cookie-max-age")]: "0",
      [key("session-cookie-expires")]: "-60",
    });
    assert.ok(result.ok);
    assert.equal(result.value?.cookie?.maxAge, 0);
    assert.equal(result.value?.cookie?.expires, -60);
  });

  it("warns that cookie settings without affinity: cookie are ignored", () => {
    const result = parseAffinity({ [key("session-cookie-name")]: "route" });
    assert.ok(result.ok);
    assert.equal(result.value?.cookie, undefined);
    assert.deepEqual(result.warnings, [
      `annotations "${key("session-cookie-name")}" are ignored without "${AFFINITY}: cookie"`,
    ]);
  });

  it("takes affinity-canary-behavior alone without a warning (it is read on canaries)", () => {
    const result = parseAffinity({ [key("affinity-canary-behavior")]: "legacy" });
    assert.deepEqual(result, {
      ok: true,
      value: { cookie: undefined, canaryBehavior: "legacy" },
      warnings: [],
    });
  });
});

describe("parseIngressAnnotations: affinity with the other families", () => {
  for (const regex of [{ [key("use-regex")]: "true" }, { [key("rewrite-target")]: "/$1" }]) {
    it(`with regex paths (${Object.keys(regex)[0]}), refuses affinity without session-cookie-path`, () => {
      const result = parseIngressAnnotations({ [AFFINITY]: "cookie", ...regex });
      assert.ok(!result.ok);
      assert.deepEqual(
        result.errors.map(e => e.field),
        [annotationPath(key("session-cookie-path"))],
      );
      assert.match(result.errors[0]!.message, /regular expressions/);
      const fixed = parseIngressAnnotations({
        [AFFINITY]: "cookie",
        [key("session-cookie-path")]: "/foo/bar",
        ...regex,
      });
      assert.ok(fixed.ok);
    });
  }

  it("warns that load-balance and upstream-hash-by are ignored next to affinity", () => {
    const result = parseIngressAnnotations({
      [AFFINITY]: "cookie",
      [key("upstream-hash-by")]: "$request_uri",
    });
    assert.ok(result.ok);
    assert.deepEqual(result.warnings, [
      `annotations "${key("upstream-hash-by")}" are ignored: "${AFFINITY}" chooses the endpoint`,
    ]);
  });
});
