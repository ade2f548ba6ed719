import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRewrite } from "../../core/annotations/rewrite";
import { compilePathPattern } from "../../core/patterns/linear-regex";
import {
  DENY_ALL_ROBOTS,
  httpsLocation,
  needsSslRedirect,
  rewriteTarget,
  robotsBody,
} from "./host-rules";

describe("robotsBody", () => {
  it("serves deny-all only at /robots.txt on a host that disables robots", () => {
    assert.equal(robotsBody({ disableRobots: true }, "/robots.txt"), DENY_ALL_ROBOTS);
    assert.equal(robotsBody({ disableRobots: true }, "/robots.txt.bak"), undefined);
    assert.equal(robotsBody({ disableRobots: false }, "/robots.txt"), undefined);
    assert.equal(robotsBody(undefined, "/robots.txt"), undefined);
  });
});

describe("needsSslRedirect", () => {
  const cases: [string, Parameters<typeof needsSslRedirect>, boolean][] = [
    ["default with TLS", [undefined, true, false], true],
    ["default without TLS", [undefined, false, false], false],
    ["already HTTPS", [undefined, true, true], false],
    [
      "ssl-redirect false with TLS",
      [{ sslRedirect: false, forceSslRedirect: false }, true, false],
      false,
    ],
    ["force without TLS", [{ sslRedirect: undefined, forceSslRedirect: true }, false, false], true],
    [
      // lua_ingress.lua: ssl_redirect needs certificate_configured_for_current_request().
      "ssl-redirect true without a certificate for the host",
      [{ sslRedirect: true, forceSslRedirect: false }, false, false],
      false,
    ],
  ];
  for (const [name, args, expected] of cases)
    it(name, () => assert.equal(needsSslRedirect(...args), expected));
  it("keeps the request target and names a non-default HTTPS port", () => {
    assert.equal(httpsLocation("a.com:8080", "/x?y=1", 8443), "https://a.com:8443/x?y=1");
    assert.equal(httpsLocation("a.com", "/", 443), "https://a.com/");
  });
});

describe("rewriteTarget", () => {
  const rewrite = (target: string) => {
    const parsed = parseRewrite({ "nginx.ingress.kubernetes.io/rewrite-target": target });
    if (!parsed.ok || !parsed.value) throw new Error("bad rewrite");
    return parsed.value;
  };
  it("replaces the path with the target and its captures, keeping the query (ingress-nginx example)", () => {
    const regex = compilePathPattern("/something(/|$)(.*)");
    const config = rewrite("/$2");
    assert.equal(rewriteTarget(config, regex, "/something"), "/");
    assert.equal(rewriteTarget(config, regex, "/something/"), "/");
    assert.equal(rewriteTarget(config, regex, "/something/new?x=1"), "/new?x=1");
    assert.equal(rewriteTarget(config, regex, "/SOMETHING/new"), "/new");
  });
  it("a constant target replaces the whole path", () => {
    assert.equal(rewriteTarget(rewrite("/"), compilePathPattern("/app"), "/app/deep/x"), "/");
  });
  it("leaves a target the regex does not match alone", () => {
    assert.equal(
      rewriteTarget(rewrite("/$1"), compilePathPattern("/api/(.*)"), "/other"),
      "/other",
    );
  });
});
