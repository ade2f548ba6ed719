// The auth step against a real HTTP auth server of ours (oauth2-proxy's contract): what it is
// sent, what each of its answers means, its outages, and the cache.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { makeCertificate } from "../../test/fixtures/certificates";
import { parseExternalAuth, type ExternalAuthConfig } from "../../core/annotations";
import { annotationKey } from "../../core/annotations/validators";
import { parseIp } from "../../core/net/ip";
import { startOAuth2StandIn, type OAuth2StandIn } from "../../test/harness/oauth2-stand-in";
import { AuthCache, authCacheable } from "./auth-cache";
import {
  authorizedFlat,
  authorizedLines,
  compileExternalAuth,
  escapeUriComponent,
  ExternalAuth,
  signinLocation,
  type AuthInput,
  type AuthOptions,
  type AuthVerdict,
} from "./external-auth";
import { HeadLinesFacts } from "./request-values";

const OPTIONS: AuthOptions = { connectTimeoutMs: 1000, readTimeoutMs: 300 };

function configOf(annotations: Record<string, string>): ExternalAuthConfig {
  const named: Record<string, string> = {};
  for (const [name, value] of Object.entries(annotations)) named[annotationKey(name)] = value;
  const parsed = parseExternalAuth(named);
  assert.ok(parsed.ok && parsed.value !== undefined, JSON.stringify(parsed));
  return parsed.value;
}

function compile(
  annotations: Record<string, string>,
  cache = new AuthCache(),
  host = "app.test",
): ExternalAuth {
  const auth = compileExternalAuth(configOf(annotations), { host, path: "/" }, OPTIONS, cache);
  assert.ok(auth instanceof ExternalAuth, String(auth));
  return auth;
}

/** A request as the fast path reads it. */
function input(target: string, headers: Record<string, string> = {}, https = false): AuthInput {
  const pairs = Object.entries(headers);
  const lines = pairs.map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const facts = new HeadLinesFacts({ method: "POST", target, host: "app.test:8443", lines }, https);
  facts.client = parseIp("203.0.113.7")!;
  return { facts, headers: pairs, clientIp: "203.0.113.7", requestId: "req-1" };
}

function answerOf(verdict: AuthVerdict) {
  assert.equal(verdict.kind, "answer", JSON.stringify(verdict));
  return verdict as Extract<AuthVerdict, { kind: "answer" }>;
}

function passOf(verdict: AuthVerdict) {
  assert.equal(verdict.kind, "pass", JSON.stringify(verdict));
  return verdict as Extract<AuthVerdict, { kind: "pass" }>;
}

describe("external auth against an oauth2-proxy-style server", () => {
  let server: OAuth2StandIn;
  let authUrl: string;

  before(async () => {
    server = await startOAuth2StandIn();
    server.addSession("alice-token", {
      user: "alice",
      email: "alice@example.com",
      groups: ["snow-group"],
    });
    authUrl = `${server.origin}/oauth2/auth`;
  });
  after(() => server.close());
  beforeEach(async () => {
    server.seen.length = 0;
    server.configure({});
    await server.setOutage(false);
  });

  it("lets a 2xx through with X-Auth-Request-User/Email copied and the client's forged ones dropped", async () => {
    const auth = compile({
      "auth-url": authUrl,
      "auth-response-headers": "X-Auth-Request-User,X-Auth-Request-Email",
    });
    const request = input("/orders?id=1", {
      Cookie: "_oauth2_proxy=alice-token",
      "X-Auth-Request-User": "root",
      "x-auth-request-email": "root@evil.test",
    });
    const pass = passOf(await auth.authorize(request));
    assert.deepEqual(pass.set, [
      ["X-Auth-Request-User", "alice"],
      ["X-Auth-Request-Email", "alice@example.com"],
    ]);
    const lines = authorizedLines(
      "Cookie: _oauth2_proxy=alice-token\r\nX-Auth-Request-User: root\r\nx-auth-request-email: root@evil.test\r\n",
      pass,
    );
    assert.equal(
      lines,
      "Cookie: _oauth2_proxy=alice-token\r\nX-Auth-Request-User: alice\r\nX-Auth-Request-Email: alice@example.com\r\n",
    );
  });

  it("drops forged spellings with underscores too (a CGI backend reads them as the same header)", async () => {
    const auth = compile({ "auth-url": authUrl, "auth-response-headers": "X-Auth-Request-User" });
    const pass = passOf(await auth.authorize(input("/", { Authorization: "Bearer alice-token" })));
    assert.equal(
      authorizedLines("X_Auth_Request_User: root\r\nx-auth-request_user: root\r\nA: b\r\n", pass),
      "A: b\r\nX-Auth-Request-User: alice\r\n",
    );
    assert.deepEqual(authorizedFlat(["X_AUTH_REQUEST_USER", "root", "A", "b"], pass), [
      "A",
      "b",
      "X-Auth-Request-User",
      "alice",
    ]);
  });

  it("drops a forged header the auth answer does not carry instead of passing it on", async () => {
    const auth = compile({ "auth-url": authUrl, "auth-response-headers": "X-Auth-Request-Tenant" });
    const pass = passOf(await auth.authorize(input("/", { Authorization: "Bearer alice-token" })));
    assert.deepEqual(pass.set, []);
    assert.equal(authorizedLines("X-Auth-Request-Tenant: admin\r\nA: b\r\n", pass), "A: b\r\n");
  });

  it("sends the client's headers and nginx.tmpl's, never the body, as GET by default", async () => {
    const auth = compile({ "auth-url": `${authUrl}?allowed_groups=snow-group` });
    await auth.authorize(
      input("/a/b?c=d", {
        Cookie: "_oauth2_proxy=alice-token",
        "Content-Length": "5",
        "X-Forwarded-For": "1.2.3.4",
        "X-Real-IP": "1.2.3.4",
        "X-Forwarded-Proto": "https",
        Accept: "text/html",
      }),
    );
    assert.equal(server.seen.length, 1);
    const seen = server.seen[0]!;
    assert.equal(seen.method, "GET");
    assert.equal(seen.url, "/oauth2/auth?allowed_groups=snow-group");
    assert.equal(seen.bodyBytes, 0);
    const h = seen.headers;
    assert.equal(h.host, "127.0.0.1", "the auth URL's host name, as ingress-nginx sends it");
    assert.equal(h.cookie, "_oauth2_proxy=alice-token");
    assert.equal(h.accept, "text/html");
    assert.equal(h["content-length"], undefined);
    assert.equal(h["x-forwarded-proto"], undefined);
    assert.equal(h["x-original-url"], "http://app.test:8443/a/b?c=d");
    assert.equal(h["x-original-method"], "POST");
    assert.equal(h["x-sent-from"], "nginx-ingress-controller");
    assert.equal(h["x-real-ip"], "203.0.113.7");
    assert.equal(h["x-forwarded-for"], "203.0.113.7");
    assert.equal(h["x-auth-request-redirect"], "/a/b?c=d");
    assert.equal(h["x-request-id"], "req-1");
    assert.equal(h["x-original-uri"], undefined, "only with auth-method");
  });

  it("uses auth-method, adding X-Original-URI and X-Scheme, and auth-request-redirect", async () => {
    const auth = compile({
      "auth-url": authUrl,
      "auth-method": "POST",
      "auth-request-redirect": "http://foo.com/redirect-me",
    });
    await auth.authorize(input("/x?y=1", {}, true));
    const seen = server.seen[0]!;
    assert.equal(seen.method, "POST");
    assert.equal(seen.bodyBytes, 0);
    assert.equal(seen.headers["x-original-uri"], "/x?y=1");
    assert.equal(seen.headers["x-scheme"], "https");
    assert.equal(seen.headers["x-auth-request-redirect"], "http://foo.com/redirect-me");
  });

  it("answers 401 with the auth server's WWW-Authenticate", async () => {
    const verdict = answerOf(await compile({ "auth-url": authUrl }).authorize(input("/")));
    assert.equal(verdict.decision, "auth-denied");
    assert.equal(verdict.answer.status, 401);
    assert.deepEqual(
      verdict.answer.headers.filter(([name]) => name === "WWW-Authenticate"),
      [["WWW-Authenticate", 'Bearer realm="oauth2"']],
    );
  });

  it("redirects a 401 to auth-signin with rd=<scheme>://<Host><escaped request URI>", async () => {
    const auth = compile({ "auth-url": authUrl, "auth-signin": "https://login.test/oauth2/start" });
    const verdict = answerOf(await auth.authorize(input("/a b/c?d=e&f")));
    assert.equal(verdict.decision, "auth-signin");
    assert.equal(verdict.answer.status, 302);
    assert.deepEqual(verdict.answer.headers[0], [
      "Location",
      "https://login.test/oauth2/start?rd=http://app.test:8443%2Fa%20b%2Fc%3Fd%3De%26f",
    ]);
  });

  it("answers 403 when the auth server forbids, never a redirect", async () => {
    const auth = compile({
      "auth-url": `${authUrl}?allowed_groups=rain-group`,
      "auth-signin": "https://login.test/start",
    });
    const verdict = answerOf(
      await auth.authorize(input("/", { Cookie: "_oauth2_proxy=alice-token" })),
    );
    assert.equal(verdict.answer.status, 403);
    assert.equal(verdict.decision, "auth-denied");
  });

  for (const status of [500, 302, 404, 204 + 100, 503]) {
    it(`answers 500 when the auth server answers ${status}`, async () => {
      server.configure({ forceStatus: status });
      const verdict = answerOf(await compile({ "auth-url": authUrl }).authorize(input("/")));
      assert.equal(verdict.decision, "auth-error");
      assert.equal(verdict.answer.status, 500);
    });
  }

  it("answers 500 while the auth server is down (connection refused), and lets through once it is back", async () => {
    const auth = compile({ "auth-url": authUrl });
    await server.setOutage("refuse");
    const down = answerOf(
      await auth.authorize(input("/", { Authorization: "Bearer alice-token" })),
    );
    assert.equal(down.answer.status, 500);
    await server.setOutage(false);
    passOf(await auth.authorize(input("/", { Authorization: "Bearer alice-token" })));
  });

  it("answers 500 when the auth server accepts and never answers (read timeout)", async () => {
    await server.setOutage("hang");
    const verdict = answerOf(
      await compile({ "auth-url": authUrl }).authorize(
        input("/", { Authorization: "Bearer alice-token" }),
      ),
    );
    assert.equal(verdict.decision, "auth-error");
  });

  it("answers 500 when the auth server is slower than the read timeout", async () => {
    server.configure({ delayMs: 1000 });
    const verdict = answerOf(
      await compile({ "auth-url": authUrl }).authorize(
        input("/", { Authorization: "Bearer alice-token" }),
      ),
    );
    assert.equal(verdict.answer.status, 500);
  });

  it("answers 500 when the TLS handshake with an https auth-url fails", async () => {
    const https = compile({ "auth-url": `https://127.0.0.1:${server.port}/oauth2/auth` });
    const verdict = answerOf(
      await https.authorize(input("/", { Authorization: "Bearer alice-token" })),
    );
    assert.equal(verdict.decision, "auth-error");
  });

  it("passes the auth server's Set-Cookie on for the client's answer", async () => {
    server.configure({ refreshCookie: "_oauth2_proxy=alice-token; Path=/; HttpOnly" });
    const pass = passOf(
      await compile({ "auth-url": authUrl }).authorize(
        input("/", { Authorization: "Bearer alice-token" }),
      ),
    );
    assert.deepEqual(pass.cookies, ["_oauth2_proxy=alice-token; Path=/; HttpOnly"]);
  });
});

describe("external auth cache", () => {
  let server: OAuth2StandIn;
  let authUrl: string;
  let now = 0;
  const clock = () => now;

  before(async () => {
    server = await startOAuth2StandIn();
    server.addSession("alice-token", { user: "alice", email: "a@x", groups: [] });
    server.addSession("bob-token", { user: "bob", email: "b@x", groups: [] });
    authUrl = `${server.origin}/oauth2/auth`;
  });
  after(() => server.close());
  beforeEach(() => {
    server.seen.length = 0;
    server.configure({});
    now = 0;
  });

  const bearer = (token: string) => input("/", { Authorization: `Bearer ${token}` });

  it("asks once per key within the duration, again after it expires", async () => {
    const auth = compile(
      {
        "auth-url": authUrl,
        "auth-cache-key": "$http_authorization",
        "auth-cache-duration": "200 202 1m",
      },
      new AuthCache(100, clock),
    );
    passOf(await auth.authorize(bearer("alice-token")));
    passOf(await auth.authorize(bearer("alice-token")));
    assert.equal(server.seen.length, 1, "the second request was answered from the cache");
    passOf(await auth.authorize(bearer("bob-token")));
    assert.equal(server.seen.length, 2, "another key is asked");
    now += 61_000;
    passOf(await auth.authorize(bearer("alice-token")));
    assert.equal(server.seen.length, 3, "expired");
  });

  it("caches only the listed statuses: 401 under the default rules, not 403 or 500", async () => {
    const auth = compile(
      { "auth-url": authUrl, "auth-cache-key": "$remote_addr$http_authorization" },
      new AuthCache(100, clock),
    );
    answerOf(await auth.authorize(bearer("nobody")));
    answerOf(await auth.authorize(bearer("nobody")));
    assert.equal(server.seen.length, 1, "401 is in 200 202 401 5m");
    server.configure({ forceStatus: 403 });
    await auth.authorize(bearer("other"));
    await auth.authorize(bearer("other"));
    assert.equal(server.seen.length, 3, "403 is not");
    server.configure({ errorRate: 1 });
    await auth.authorize(bearer("third"));
    server.configure({});
    passOf(await auth.authorize(bearer("alice-token")));
    answerOf(await auth.authorize(bearer("third")));
    assert.equal(server.seen.length, 6, "a 500 is never kept");
  });

  it("does not keep answers with Set-Cookie or Cache-Control: no-store", async () => {
    const auth = compile(
      { "auth-url": authUrl, "auth-cache-key": "$http_authorization" },
      new AuthCache(100, clock),
    );
    server.configure({ refreshCookie: "s=1" });
    await auth.authorize(bearer("alice-token"));
    await auth.authorize(bearer("alice-token"));
    server.configure({ cacheControl: "private, no-store" });
    await auth.authorize(bearer("alice-token"));
    await auth.authorize(bearer("alice-token"));
    assert.equal(server.seen.length, 4);
    assert.equal(authCacheable({ "cache-control": "max-age=0" }), false);
    assert.equal(authCacheable({ "cache-control": "max-age=60" }), true);
    assert.equal(authCacheable({ vary: "*" }), false);
  });

  it("keeps at most its size, dropping the least recently used", () => {
    const cache = new AuthCache(3, clock);
    const answer = { status: 200, headers: {} };
    for (const key of ["a", "b", "c"]) cache.set(key, answer, 1000);
    assert.ok(cache.get("a"));
    cache.set("d", answer, 1000);
    assert.equal(cache.size, 3);
    assert.equal(cache.get("b"), undefined, "b was the least recently used");
    assert.ok(cache.get("a") && cache.get("c") && cache.get("d"));
    cache.set("big", { status: 200, headers: { x: "y".repeat(9000) } }, 1000);
    assert.equal(cache.get("big"), undefined, "an answer over the entry size is not kept");
  });

  it("keeps routes apart: another auth-url or host is asked even for the same key", async () => {
    const cache = new AuthCache(100, clock);
    const one = compile({ "auth-url": authUrl, "auth-cache-key": "$http_authorization" }, cache);
    const other = compile(
      { "auth-url": authUrl, "auth-cache-key": "$http_authorization" },
      cache,
      "other.test",
    );
    const two = compile(
      { "auth-url": `${authUrl}?x=1`, "auth-cache-key": "$http_authorization" },
      cache,
    );
    await one.authorize(bearer("alice-token"));
    await two.authorize(bearer("alice-token"));
    await other.authorize(bearer("alice-token"));
    assert.equal(server.seen.length, 3);
  });
});

describe("external auth: compile and signin", () => {
  it("puts the route's host in auth-url's $host", () => {
    const auth = compile({ "auth-url": "https://$host/oauth2/auth" }, new AuthCache(), "shop.test");
    assert.equal(auth.url.href, "https://shop.test/oauth2/auth");
  });

  it("refuses $host in auth-url on a wildcard or host-less rule: the client would pick its judge", () => {
    const config = configOf({ "auth-url": "https://$host/oauth2/auth" });
    for (const host of ["", "*.shop.test"]) {
      const compiled = compileExternalAuth(config, { host, path: "/" }, OPTIONS, new AuthCache());
      assert.equal(typeof compiled, "string");
      assert.match(compiled as string, /\$host on a rule without an exact host/);
    }
  });

  it("expands the documented signin URL and keeps its own rd", () => {
    const config = configOf({
      "auth-url": "https://$host/oauth2/auth",
      "auth-signin": "https://$host/oauth2/start?rd=$escaped_request_uri",
    });
    const facts = input("/p?q=1", {}, true).facts;
    assert.equal(
      signinLocation(config.signin!, "rd", facts),
      "https://app.test/oauth2/start?rd=%2Fp%3Fq%3D1",
    );
  });

  it("adds the redirect parameter with & when the signin URL has a query, under its own name", () => {
    const config = configOf({
      "auth-url": "http://a.test/auth",
      "auth-signin": "http://a.test/start?x=1",
      "auth-signin-redirect-param": "origUrl",
    });
    assert.equal(
      signinLocation(config.signin!, config.redirectParam, input("/z").facts),
      "http://a.test/start?x=1&origUrl=http://app.test:8443%2Fz",
    );
  });

  it("escapes every byte outside RFC 3986's unreserved characters", () => {
    assert.equal(escapeUriComponent("/a-b_c.d~e?f=g&h=é'"), "%2Fa-b_c.d~e%3Ff%3Dg%26h%3D%C3%A9%27");
  });
});

describe("external auth: an https auth server", () => {
  let server: Server;
  let port: number;
  before(async () => {
    // A real auth server behind a self-signed certificate: it would say 200 to anyone.
    const certificate = makeCertificate({ key: "ecdsa", dnsNames: ["localhost"] });
    server = createHttpsServer({ cert: certificate.certPem, key: certificate.keyPem }, (_, res) =>
      res.writeHead(200, { "x-user": "anyone" }).end(),
    );
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>(resolve => server.close(() => resolve())));

  it("answers 500 when its certificate does not verify, never letting the request through", async () => {
    const verdict = answerOf(
      await compile({ "auth-url": `https://localhost:${port}/auth` }).authorize(input("/")),
    );
    assert.equal(verdict.decision, "auth-error");
  });
});

describe("external auth: an unreachable server", () => {
  it("answers 500 for an auth-url off the machine that never answers", async () => {
    // TEST-NET-1: on a real network the connect times out; this sandbox accepts the connection
    // and never answers (the read timeout). The connect timeout proper is tested end to end
    // against a listener whose accept queue is full (test/integration/traffic/external-auth).
    const auth = compile({ "auth-url": "http://192.0.2.1:9/auth" });
    const verdict = answerOf(await auth.authorize(input("/")));
    assert.equal(verdict.decision, "auth-error");
  });
});
