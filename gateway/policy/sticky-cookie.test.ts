import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { COOKIE_AFFINITY_DEFAULTS, type CookieAffinity } from "../../core/annotations";
import {
  cookieTime,
  parseStickyValue,
  sameSiteNoneCompatible,
  setCookieHeader,
} from "./sticky-cookie";

const COOKIE: CookieAffinity = COOKIE_AFFINITY_DEFAULTS;
const VALUE = { token: "0123456789abcdef.fedcba9876543210", tag: "00112233aabbccdd" };
const HTTP = { routePath: "/", https: false, userAgent: undefined };
// 2017-02-10 14:11:12 UTC: the moment of ingress-nginx's example answer.
const NOW = Date.UTC(2017, 1, 10, 14, 11, 12);

describe("setCookieHeader", () => {
  it("defaults: the value, the route's Path and HttpOnly, nothing else", () => {
    assert.equal(
      setCookieHeader(COOKIE, VALUE, { ...HTTP, routePath: "/something" }, NOW),
      "INGRESSCOOKIE=0123456789abcdef.fedcba9876543210|00112233aabbccdd; Path=/something; HttpOnly",
    );
  });

  it("with expires and max-age 172800, as ingress-nginx's example answer (Expires two days on, nginx's format)", () => {
    const header = setCookieHeader(COOKIE, VALUE, HTTP, NOW);
    assert.doesNotMatch(header, /Expires|Max-Age/);
    const both = setCookieHeader({ ...COOKIE, expires: 172800, maxAge: 172800 }, VALUE, HTTP, NOW);
    assert.equal(
      both,
      `INGRESSCOOKIE=${VALUE.token}|${VALUE.tag}; Expires=Sun, 12-Feb-17 14:11:12 GMT; Max-Age=172800; Path=/; HttpOnly`,
    );
  });

  it("with a domain, a path and SameSite, in lua-resty-cookie's order", () => {
    const header = setCookieHeader(
      { ...COOKIE, name: "route", domain: "foo.bar", path: "/foo/bar", sameSite: "Strict" },
      VALUE,
      HTTP,
      NOW,
    );
    assert.equal(
      header,
      `route=${VALUE.token}|${VALUE.tag}; Domain=foo.bar; Path=/foo/bar; HttpOnly; SameSite=Strict`,
    );
  });

  it("is Secure when asked for on plain HTTP, and always on HTTPS (ingress-nginx's e2e)", () => {
    assert.doesNotMatch(setCookieHeader(COOKIE, VALUE, HTTP, NOW), /Secure/);
    assert.match(setCookieHeader({ ...COOKIE, secure: true }, VALUE, HTTP, NOW), /; Secure;/);
    assert.match(setCookieHeader(COOKIE, VALUE, { ...HTTP, https: true }, NOW), /; Secure;/);
  });

  it("leaves SameSite=None out for a browser that rejects it, only when conditional", () => {
    const oldChrome =
      "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/59.0.3071.115 Safari/537.36";
    const none = { ...COOKIE, sameSite: "None" as const, secure: true };
    const request = { ...HTTP, userAgent: oldChrome };
    assert.match(setCookieHeader(none, VALUE, request, NOW), /; SameSite=None$/);
    const conditional = { ...none, conditionalSameSiteNone: true };
    assert.doesNotMatch(setCookieHeader(conditional, VALUE, request, NOW), /SameSite/);
    const modern = { ...HTTP, userAgent: "Mozilla/5.0 Chrome/120.0.0.0 Safari/537.36" };
    assert.match(setCookieHeader(conditional, VALUE, modern, NOW), /; SameSite=None$/);
    // Lax and Strict are never left out.
    const lax = { ...conditional, sameSite: "Lax" as const };
    assert.match(setCookieHeader(lax, VALUE, request, NOW), /; SameSite=Lax$/);
  });

  it("attack: a route path that would end the attribute is not written; the Path is / then", () => {
    for (const routePath of ["/a;Domain=evil.example", "/a b", "/a\r\nX: y"]) {
      const header = setCookieHeader(COOKIE, VALUE, { ...HTTP, routePath }, NOW);
      assert.match(header, /; Path=\/; HttpOnly$/, routePath);
    }
  });
});

describe("cookieTime", () => {
  it("writes nginx's cookie time: two-digit years up to 2037, four after, 1970 before", () => {
    assert.equal(
      cookieTime(Date.UTC(2010, 10, 18, 11, 27, 35) / 1000),
      "Thu, 18-Nov-10 11:27:35 GMT",
    );
    assert.equal(cookieTime(Date.UTC(2040, 0, 2, 3, 4, 5) / 1000), "Mon, 02-Jan-2040 03:04:05 GMT");
    assert.equal(cookieTime(-100), "Thu, 01-Jan-70 00:00:00 GMT");
  });
});

describe("sameSiteNoneCompatible (ingress-nginx's same_site.lua)", () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, true],
    ["Mozilla/5.0 (X11; Linux x86_64) Chrome/51.0.2704.103 Safari/537.36", false],
    ["Mozilla/5.0 (X11; Linux x86_64) Chrome/66.0.3359.181 Safari/537.36", false],
    ["Mozilla/5.0 (X11; Linux x86_64) Chrome/80.0.3987.87 Safari/537.36", true],
    ["Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X) AppleWebKit/605.1.15", false],
    ["Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15", false],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Safari/605.1.15",
      false,
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/90.0 Safari/537.36",
      true,
    ],
    ["curl/8.5.0", true],
  ];
  for (const [agent, compatible] of cases) {
    it(`${JSON.stringify(agent)}: ${compatible}`, () => {
      assert.equal(sameSiteNoneCompatible(agent), compatible);
    });
  }
});

describe("parseStickyValue", () => {
  it("reads both shapes Bulwark writes, quoted or not", () => {
    assert.deepEqual(parseStickyValue(`${VALUE.token}|${VALUE.tag}`), VALUE);
    assert.deepEqual(parseStickyValue(`"${VALUE.token}|${VALUE.tag}"`), VALUE);
    const persistent = { token: "0123456789abcdef0123456789abcdef", tag: VALUE.tag };
    assert.deepEqual(parseStickyValue(`${persistent.token}|${persistent.tag}`), persistent);
  });

  it("attack: anything else is no cookie (never an error)", () => {
    const garbage = [
      undefined,
      "",
      "|",
      "a9907b79b248140b56bb13723f72b67697baac3d",
      "1700000000.123.456789|0123456789abcdef0123456789abcdef",
      `${VALUE.token}|${VALUE.tag}x`,
      `${VALUE.token.toUpperCase()}|${VALUE.tag}`,
      `../../etc|${VALUE.tag}`,
      `${VALUE.token}|${VALUE.tag}`.repeat(1000),
      "10.0.0.1:8080|0011223344556677",
      "%00%00",
    ];
    for (const raw of garbage) assert.equal(parseStickyValue(raw), undefined, String(raw));
  });
});
