import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseIngressAnnotations } from "./index";
import {
  cacheSeconds,
  DEFAULT_REDIRECT_PARAM,
  parseCacheDuration,
  parseExternalAuth,
  type CacheRule,
  type ExternalAuthConfig,
} from "./external-auth";
import { annotationKey } from "./validators";

const key = (name: string) => annotationKey(`auth-${name}`);
const URL_KEY = key("url");

function config(annotations: Record<string, string>): ExternalAuthConfig {
  const parsed = parseExternalAuth(annotations);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  assert.ok(parsed.value !== undefined);
  return parsed.value;
}

/** The denial's one error: the field it names and its message. */
function refusal(annotations: Record<string, string>): { field: string; message: string } {
  const parsed = parseExternalAuth(annotations);
  assert.ok(!parsed.ok, `expected a refusal of ${JSON.stringify(annotations)}`);
  assert.equal(parsed.errors.length, 1, JSON.stringify(parsed.errors));
  return parsed.errors[0]!;
}

function assertRefused(annotations: Record<string, string>, name: string, pattern: RegExp): void {
  const error = refusal(annotations);
  assert.equal(error.field, `metadata.annotations[${JSON.stringify(key(name))}]`);
  assert.match(error.message, pattern);
}

describe("external-auth annotations", () => {
  it("reads nothing when none is set", () => {
    assert.deepEqual(parseExternalAuth({}), { ok: true, value: undefined, warnings: [] });
  });

  it("reads ingress-nginx's documented oauth2-proxy example", () => {
    const c = config({
      [URL_KEY]: "https://$host/oauth2/auth",
      [key("signin")]: "https://$host/oauth2/start?rd=$escaped_request_uri",
      [key("response-headers")]: "X-Auth-Request-User, X-Auth-Request-Email",
    });
    assert.deepEqual(c.url.parts, [
      { kind: "text", text: "https://" },
      { kind: "host" },
      { kind: "text", text: "/oauth2/auth" },
    ]);
    assert.deepEqual(c.signin?.parts, [
      { kind: "text", text: "https://" },
      { kind: "host" },
      { kind: "text", text: "/oauth2/start?rd=" },
      { kind: "escaped_request_uri" },
    ]);
    assert.deepEqual(c.responseHeaders, ["X-Auth-Request-User", "X-Auth-Request-Email"]);
    assert.equal(c.method, undefined, "GET, as nginx's subrequest");
    assert.equal(c.redirectParam, DEFAULT_REDIRECT_PARAM);
    assert.equal(c.cacheKey, undefined);
    assert.equal(c.alwaysSetCookie, false);
    assert.deepEqual(c.keepalive, { connections: 0, timeoutSeconds: 60 });
  });

  // main_test.go TestAnnotations: each URL refused or read.
  for (const [title, url] of [
    ["empty", ""],
    ["no scheme", "bar"],
    ["invalid host", "http://"],
    ["invalid host (multiple dots)", "http://foo..bar.com"],
    ["another scheme", "ftp://foo.com/auth"],
    ["a port without a host", "http://:8080/auth"],
    ["a user name", "http://user@foo.com/auth"],
    ["a fragment", "http://foo.com/auth#x"],
    ["a space", "http://foo.com/a b"],
    ["a line break", "http://foo.com/a\r\nX: y"],
    ["an unknown variable", "http://foo.com/$request_body"],
    ["a request variable in auth-url", "http://foo.com/auth?u=$request_uri"],
  ] as const) {
    it(`refuses an auth-url with ${title}, naming the key`, () => {
      assertRefused({ [URL_KEY]: url }, "url", /expected an http:\/\/ or https:\/\/ URL/);
    });
  }

  for (const url of [
    "http://bar.foo.com/external-auth/auth?allowed_groups=snow-group,rain-group",
    "https://auth.example.com:8443/check",
    "HTTP://auth-svc.auth.svc.cluster.local/verify",
    "http://10.0.0.7:4180/oauth2/auth",
  ]) {
    it(`reads auth-url ${url}`, () => {
      assert.equal(config({ [URL_KEY]: url }).url.raw, url);
    });
  }

  it("reads the signin URLs of main_test.go with their variables", () => {
    const c = config({
      [URL_KEY]: "http://foo.com/external-auth/auth",
      [key("signin")]: "http://foo.com/external-auth/start?rd=https://$host$escaped_request_uri",
      [key("signin-redirect-param")]: "origUrl",
      [key("request-redirect")]: "http://foo.com/redirect-me",
      [key("always-set-cookie")]: "true",
    });
    assert.equal(c.redirectParam, "origUrl");
    assert.equal(c.requestRedirect, "http://foo.com/redirect-me");
    assert.equal(c.alwaysSetCookie, true);
    assert.deepEqual(c.signin?.parts, [
      { kind: "text", text: "http://foo.com/external-auth/start?rd=https://" },
      { kind: "host" },
      { kind: "escaped_request_uri" },
    ]);
  });

  it("refuses the other keys without auth-url: the route would be served open", () => {
    assertRefused({ [key("signin")]: "https://a.example/start" }, "url", /need.*auth-url/);
    assertRefused({ [key("response-headers")]: "X-User" }, "url", /unauthenticated/);
  });

  for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
    it(`reads auth-method ${method}`, () => {
      assert.equal(
        config({ [URL_KEY]: "http://a.example", [key("method")]: method }).method,
        method,
      );
    });
  }

  for (const method of ["get", "FOO", "GET ", "", "PROPFIND"]) {
    it(`refuses auth-method ${JSON.stringify(method)}, naming the key`, () => {
      assertRefused({ [URL_KEY]: "http://a.example", [key("method")]: method }, "method", /GET/);
    });
  }

  // main_test.go TestHeaderAnnotations.
  for (const [raw, names] of [
    ["h1", ["h1"]],
    ["", []],
    ["  ", []],
    ["1,2", ["1", "2"]],
    [",1,,2,", ["1", "2"]],
    ["X-Auth-Request-User,X_Legacy", ["X-Auth-Request-User", "X_Legacy"]],
  ] as const) {
    it(`reads auth-response-headers ${JSON.stringify(raw)}`, () => {
      const c = config({ [URL_KEY]: "http://goog.url", [key("response-headers")]: raw });
      assert.deepEqual(c.responseHeaders, names);
    });
  }

  for (const raw of ["1 2", "1+2", "X-User:", "X-User\r\nX-Evil"]) {
    it(`refuses auth-response-headers ${JSON.stringify(raw)}, naming the key`, () => {
      assertRefused(
        { [URL_KEY]: "http://goog.url", [key("response-headers")]: raw },
        "response-headers",
        /header names/,
      );
    });
  }

  it("refuses an auth-request-redirect a header could not carry", () => {
    assertRefused(
      { [URL_KEY]: "http://a.example", [key("request-redirect")]: "http://x/\r\nSet-Cookie: a=b" },
      "request-redirect",
      /a URL of letters/,
    );
  });

  it("refuses a signin URL with a variable Bulwark does not read", () => {
    assertRefused(
      { [URL_KEY]: "http://a.example", [key("signin")]: "https://a.example/s?u=$remote_user" },
      "signin",
      /\$remote_user is not read here/,
    );
  });

  it("reads auth-cache-key as nginx variables and text, refusing other characters", () => {
    const c = config({
      [URL_KEY]: "http://a.example",
      [key("cache-key")]: "$remote_user$http_authorization",
    });
    assert.deepEqual(c.cacheKey, [
      { kind: "remote_user" },
      { kind: "header", name: "authorization" },
    ]);
    assertRefused(
      { [URL_KEY]: "http://a.example", [key("cache-key")]: "$foo$bar" },
      "cache-key",
      /\$foo is not a variable Bulwark reads/,
    );
    assertRefused(
      { [URL_KEY]: "http://a.example", [key("cache-key")]: "$cookie_a;rm" },
      "cache-key",
      /only letters/,
    );
  });

  it("refuses negative or non-numeric keepalive settings (ingress-nginx would fall back)", () => {
    assertRefused({ [URL_KEY]: "http://goog.url", [key("keepalive")]: "-2" }, "keepalive", /0 and/);
    assertRefused(
      { [URL_KEY]: "http://goog.url", [key("keepalive")]: "x" },
      "keepalive",
      /integer/,
    );
    assertRefused(
      { [URL_KEY]: "http://goog.url", [key("keepalive-requests")]: "-1" },
      "keepalive-requests",
      /integer/,
    );
    assertRefused(
      { [URL_KEY]: "http://goog.url", [key("keepalive-timeout")]: "-1" },
      "keepalive-timeout",
      /seconds/,
    );
    const c = config({
      [URL_KEY]: "http://goog.url",
      [key("keepalive")]: "5",
      [key("keepalive-share-vars")]: "false",
      [key("keepalive-requests")]: "500",
      [key("keepalive-timeout")]: "50",
    });
    assert.deepEqual(c.keepalive, { connections: 5, timeoutSeconds: 50 });
  });

  it("warns about auth-cache-duration without auth-cache-key", () => {
    const parsed = parseExternalAuth({
      [URL_KEY]: "http://a.example",
      [key("cache-duration")]: "5m",
    });
    assert.ok(parsed.ok);
    assert.match(parsed.warnings.join("\n"), /auth-cache-duration" has no effect/);
  });

  it("is denied through the Ingress parse with every other family's errors", () => {
    const parsed = parseIngressAnnotations({ [URL_KEY]: "bar" });
    assert.ok(!parsed.ok);
    assert.match(parsed.errors[0]!.field, /auth-url/);
  });
});

function rulesOf(raw: string): CacheRule[] {
  const parsed = parseCacheDuration(raw);
  assert.ok(parsed.ok);
  return parsed.value;
}

describe("auth-cache-duration", () => {
  // main_test.go TestCacheDurationAnnotations and TestParseStringToCacheDurations.
  it("reads ingress-nginx's default: 200, 202 and 401 for five minutes", () => {
    const c = config({ [URL_KEY]: "http://a.example", [key("cache-key")]: "$remote_user" });
    assert.deepEqual(c.cacheRules, [{ statuses: [200, 202, 401], seconds: 300 }]);
  });

  for (const [raw, rules] of [
    ["5m", [{ statuses: [200, 301, 302], seconds: 300 }]],
    [
      "200 202 10m, 401 5m",
      [
        { statuses: [200, 202], seconds: 600 },
        { statuses: [401], seconds: 300 },
      ],
    ],
    [
      ",5m,,401 10m,",
      [
        { statuses: [200, 301, 302], seconds: 300 },
        { statuses: [401], seconds: 600 },
      ],
    ],
    [",200 5m,", [{ statuses: [200], seconds: 300 }]],
    ["any 1h 30m", [{ statuses: "any", seconds: 5400 }]],
    ["200 500ms", [{ statuses: [200], seconds: 0.5 }]],
  ] as const) {
    it(`reads ${JSON.stringify(raw)}`, () => {
      assert.deepEqual(parseCacheDuration(raw), { ok: true, value: rules });
    });
  }

  for (const raw of ["200", "5m, xaxax", "5m 200", ",200,", "", "200 5x", "999 5m", "2y"]) {
    it(`refuses ${JSON.stringify(raw)}, naming the key`, () => {
      assertRefused(
        {
          [URL_KEY]: "http://a.example",
          [key("cache-key")]: "$remote_user",
          [key("cache-duration")]: raw,
        },
        "cache-duration",
        /proxy_cache_valid rules/,
      );
    });
  }

  it("takes the first rule that is any or names the status, as nginx", () => {
    const rules = rulesOf("401 1m, any 10s, 200 1h");
    assert.equal(cacheSeconds(rules, 401), 60);
    assert.equal(cacheSeconds(rules, 200), 10);
    assert.equal(cacheSeconds(rulesOf("200 1m"), 403), 0);
  });
});
