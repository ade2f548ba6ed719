import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileRoutes } from "../routing/compile";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { findRoute, type Route } from "../routing/table";
import { NodeHeadersFacts } from "./request-values";
import { planRequest, type Plan, type ProxyPlan } from "./route-traffic";

const P = "nginx.ingress.kubernetes.io/";
const slice = (service: string, ready = true) =>
  endpointSlice({ service, ports: [{ port: 80 }], endpoints: [{ address: "10.0.0.1", ready }] });

const table = compileRoutes(
  view(
    1,
    [
      ingress({
        name: "main",
        annotations: {
          [`${P}enable-cors`]: "true",
          [`${P}cors-allow-origin`]: "https://a.example, https://b.example",
          [`${P}disable-robots`]: "true",
        },
        rules: [{ host: "shop.test", paths: [{ path: "/", service: "main" }] }],
        tls: [{ hosts: ["shop.test"], secretName: "shop" }],
      }),
      ingress({
        name: "beta",
        created: "2025-01-02T00:00:00Z",
        annotations: {
          [`${P}canary`]: "true",
          [`${P}canary-by-header`]: "X-Beta",
          [`${P}canary-weight`]: "30",
          [`${P}canary-request-add-header`]: "X-Dyed:beta",
          [`${P}canary-request-add-query`]: "dyed=beta",
          [`${P}canary-response-add-header`]: "X-Served-By:beta",
        },
        rules: [{ host: "shop.test", paths: [{ path: "/", service: "beta" }] }],
      }),
      ingress({
        name: "gone",
        created: "2025-01-03T00:00:00Z",
        annotations: { [`${P}canary`]: "true", [`${P}canary-by-cookie`]: "gone" },
        rules: [{ host: "shop.test", paths: [{ path: "/", service: "gone" }] }],
      }),
      ingress({
        name: "api",
        annotations: { [`${P}rewrite-target`]: "/$2" },
        rules: [{ host: "api.test", paths: [{ path: "/v1(/|$)(.*)", service: "main" }] }],
      }),
      ingress({
        name: "moved",
        annotations: {
          [`${P}permanent-redirect`]: "https://new.example/landing?from=old",
          [`${P}permanent-redirect-code`]: "308",
          [`${P}enable-cors`]: "true",
        },
        rules: [{ host: "old.test", paths: [{ path: "/", service: "main" }] }],
        tls: [{ hosts: ["old.test"], secretName: "old" }],
      }),
      ingress({
        name: "both",
        annotations: {
          [`${P}permanent-redirect`]: "https://permanent.example",
          [`${P}temporal-redirect`]: "https://temporal.example",
        },
        rules: [{ host: "both.test", paths: [{ path: "/", service: "main" }] }],
      }),
      ingress({
        name: "app",
        annotations: { [`${P}app-root`]: "/app1" },
        rules: [{ host: "app.test", paths: [{ path: "/", service: "main" }] }],
        tls: [{ hosts: ["app.test"], secretName: "app" }],
      }),
    ],
    [slice("main"), slice("beta"), slice("gone", false)],
  ),
).table;

function plan(
  host: string,
  target: string,
  request: { method?: string; headers?: Record<string, string>; https?: boolean; random?: number },
): Plan {
  const main = findRoute(table, host, target) as Route;
  const facts = new NodeHeadersFacts(
    request.method ?? "GET",
    target,
    { host, ...request.headers },
    request.https ?? true,
  );
  return planRequest(main, main.traffic!, facts, () => request.random ?? 0.99);
}

function proxied(p: Plan) {
  assert.equal(p.kind, "proxy");
  return p as ProxyPlan;
}

describe("planRequest: answers of the gateway", () => {
  it("given plain HTTP on a host with TLS, redirects 308 to https on the same target", () => {
    const p = plan("shop.test", "/cart?x=1", { https: false });
    assert.deepEqual(p.kind === "answer" && [p.answer.status, p.answer.headers], [
      308,
      [["Location", "https://shop.test/cart?x=1"]],
    ]);
  });
  it("given /robots.txt with disable-robots, answers the deny-all file", () => {
    const p = plan("shop.test", "/robots.txt", {});
    assert.deepEqual(p.kind === "answer" && [p.answer.status, p.answer.body], [
      200,
      "User-agent: *\nDisallow: /\n",
    ]);
  });
  it("given a preflight from an allowed origin, answers 204 echoing that origin", () => {
    const p = plan("shop.test", "/", {
      method: "OPTIONS",
      headers: { origin: "https://b.example" },
    });
    assert.equal(p.kind === "answer" && p.answer.status, 204);
    const headers = new Map(p.kind === "answer" ? p.answer.headers : []);
    assert.equal(headers.get("access-control-allow-origin"), "https://b.example");
  });
  it("given a preflight from another origin, proxies it without CORS headers", () => {
    const p = proxied(
      plan("shop.test", "/", { method: "OPTIONS", headers: { origin: "https://evil.example" } }),
    );
    assert.deepEqual(p.response.set, []);
  });
});

describe("planRequest: redirects and app-root (ingress-nginx's `return`s)", () => {
  const answered = (p: Plan) => {
    assert.equal(p.kind, "answer");
    const a = p as Extract<Plan, { kind: "answer" }>;
    return [a.answer.status, new Map(a.answer.headers).get("Location"), a.decision];
  };
  it("given permanent-redirect with code 308, answers every path with the URL as written", () => {
    const location = "https://new.example/landing?from=old";
    assert.deepEqual(answered(plan("old.test", "/any/path?x=1", {})), [
      308,
      location,
      "permanent-redirect",
    ]);
  });
  it("given plain HTTP on a host with TLS, the redirect comes before ssl-redirect", () => {
    assert.deepEqual(answered(plan("old.test", "/a", { https: false }))[0], 308);
    assert.equal(
      answered(plan("old.test", "/a", { https: false }))[1],
      "https://new.example/landing?from=old",
    );
  });
  it("given a CORS preflight on a redirecting route, the preflight is answered first", () => {
    const p = plan("old.test", "/", {
      method: "OPTIONS",
      headers: { origin: "https://x.example" },
    });
    assert.deepEqual(p.kind === "answer" && [p.answer.status, p.decision], [204, "cors-preflight"]);
  });
  it("given both permanent and temporal redirects, the temporal one answers with 302", () => {
    assert.deepEqual(answered(plan("both.test", "/", {})), [
      302,
      "https://temporal.example",
      "temporal-redirect",
    ]);
  });
  it("given app-root, redirects exactly '/' (any query) with 302 to the same scheme and Host", () => {
    assert.deepEqual(answered(plan("app.test", "/?q=1", {})), [
      302,
      "https://app.test/app1",
      "app-root",
    ]);
    assert.deepEqual(answered(plan("app.test:8443", "/", {})), [
      302,
      "https://app.test:8443/app1",
      "app-root",
    ]);
  });
  it("given app-root over plain HTTP, it comes before ssl-redirect (an http Location)", () => {
    assert.deepEqual(answered(plan("app.test", "/", { https: false })), [
      302,
      "http://app.test/app1",
      "app-root",
    ]);
  });
  it("given app-root, any other path is proxied", () => {
    assert.equal(proxied(plan("app.test", "/app1", {})).route.ingress, "default/app");
    assert.equal(proxied(plan("app.test", "/index.html", {})).route.ingress, "default/app");
  });
});

describe("planRequest: canary and edits", () => {
  it("given the canary header, sends to the canary with its dyeing actions", () => {
    const p = proxied(plan("shop.test", "/p?a=1", { headers: { "x-beta": "always" } }));
    assert.deepEqual(
      [p.route.ingress, p.variant, p.target],
      ["default/beta", "canary", "/p?a=1&dyed=beta"],
    );
    assert.deepEqual(p.request.set, [["X-Dyed", "beta"]]);
    assert.deepEqual(p.response.set, [["X-Served-By", "beta"]]);
  });
  it("given an allowed Origin on a canary request, the response gets CORS and canary headers", () => {
    const p = proxied(
      plan("shop.test", "/", { headers: { "x-beta": "always", origin: "https://a.example" } }),
    );
    assert.deepEqual(
      p.response.set.map(([n]) => n),
      ["access-control-allow-origin", "access-control-allow-credentials", "X-Served-By"],
    );
    assert.deepEqual(p.response.add, [["vary", "Origin"]]);
  });
  it("given a draw inside the canary's weight, sends to it; outside, to main", () => {
    assert.equal(proxied(plan("shop.test", "/", { random: 0.29 })).variant, "canary");
    assert.equal(proxied(plan("shop.test", "/", { random: 0.3 })).variant, "main");
  });
  it("given a matching canary without a ready endpoint, falls back to main and says why", () => {
    const p = proxied(plan("shop.test", "/", { headers: { cookie: "gone=always" } }));
    assert.equal(p.route.ingress, "default/main");
    assert.match(p.decision, /canary default\/gone has no ready endpoint/);
  });
  it("given rewrite-target with captures, rewrites the path and keeps the query", () => {
    const p = proxied(plan("api.test", "/v1/users/7?full=1", {}));
    assert.equal(p.target, "/users/7?full=1");
    assert.equal(proxied(plan("api.test", "/v1", {})).target, "/");
  });
});
