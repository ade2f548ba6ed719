// The traffic policy in the request path, over real sockets, on both the fast path and Node's HTTP
// path (a Connection header naming another header sends a request to Node's path).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, loopbackSlice, view } from "../routing/testkit";
import { ask, backendOf, namedBackend, type AskOptions, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

function echoed(body: string): { name: string; url: string; headers: Record<string, string> } {
  return JSON.parse(body) as { name: string; url: string; headers: Record<string, string> };
}

describe("data plane: traffic policy", () => {
  let main: Backend;
  let beta: Backend;
  let errors: Backend;
  let plane: DataPlane;

  before(async () => {
    [main, beta] = [await namedBackend("main"), await namedBackend("beta")];
    errors = await namedBackend("errors");
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const errorPages = {
      [`${P}custom-http-errors`]: "404,503",
      [`${P}default-backend`]: "errors",
    };
    const errorsService = {
      metadata: { namespace: "default", name: "errors" },
      spec: { ports: [{ name: "web", port: 8080 }] },
    };
    const errorsSlice = endpointSlice({
      service: "errors",
      ports: [{ name: "web", port: errors.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    await plane.apply({
      ...view(
        1,
        [
          ingress({
            name: "pages",
            annotations: errorPages,
            rules: [{ host: "pages.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "plain-pages",
            annotations: { [`${P}custom-http-errors`]: "404" },
            rules: [{ host: "plain-pages.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "empty",
            annotations: { [`${P}default-backend`]: "errors" },
            rules: [{ host: "empty.test", paths: [{ path: "/", service: "nobody" }] }],
          }),
          ingress({
            name: "shop",
            annotations: {
              [`${P}enable-cors`]: "true",
              [`${P}cors-allow-origin`]: "https://a.example, https://b.example",
              [`${P}disable-robots`]: "true",
            },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "shop-beta",
            created: "2025-01-02T00:00:00Z",
            annotations: {
              [`${P}canary`]: "true",
              [`${P}canary-by-header`]: "X-Beta",
              [`${P}canary-request-add-header`]: "X-Dyed:beta",
              [`${P}canary-request-add-query`]: "dyed=1",
              [`${P}canary-response-add-header`]: "X-Served-By:beta",
            },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "beta" }] }],
          }),
          ingress({
            name: "api",
            annotations: { [`${P}rewrite-target`]: "/$2", [`${P}ssl-redirect`]: "false" },
            rules: [{ host: "api.test", paths: [{ path: "/v1(/|$)(.*)", service: "main" }] }],
            tls: [{ hosts: ["api.test"], secretName: "api" }],
          }),
          ingress({
            name: "moved",
            annotations: { [`${P}temporal-redirect`]: "https://new.example/home" },
            rules: [{ host: "moved.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "app",
            annotations: { [`${P}app-root`]: "/app1" },
            rules: [{ host: "app.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "secure",
            rules: [{ host: "secure.test", paths: [{ path: "/", service: "main" }] }],
            tls: [{ hosts: ["secure.test"], secretName: "secure" }],
          }),
          ingress({
            name: "hostile-regex",
            annotations: { [`${P}use-regex`]: "true" },
            rules: [
              {
                host: "regex.test",
                paths: [
                  ...Array.from({ length: 10 }, (_, k) => ({
                    path: `/${k}?(a|b)*a[ab]{1000}c`,
                    service: "beta",
                  })),
                  { path: "/api/[a-z]+", service: "main" },
                ],
              },
            ],
          }),
          ingress({
            name: "open",
            rules: [{ host: "regex.test", paths: [{ path: "/", service: "main" }] }],
          }),
        ],
        [loopbackSlice("main", main.port), loopbackSlice("beta", beta.port), errorsSlice],
      ),
      services: [errorsService],
    });
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await Promise.all([main.close(), beta.close(), errors.close()]);
  });

  for (const [label, via] of PATHS) {
    const send = (host: string, path: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, path, { ...options, headers: { ...via, ...options.headers } });

    describe(label, () => {
      it("given a path too costly for its host's regex routes, answers 414 at once, never the route below them", async () => {
        // Ten paths of 1 010 RE2 instructions: a 4 KiB path against them held the worker seconds.
        const long = await send("regex.test", `/${"ab".repeat(2048)}`);
        assert.equal(long.status, 414);
        assert.match(long.body, /^414 URI Too Long: this host's routes are regular expressions/);
        assert.equal(backendOf(await send("regex.test", "/api/users")), "main");
      });

      it("given the canary header, the canary answers with the dyed request and response", async () => {
        const answer = await send("shop.test", "/p?a=1", { headers: { "x-beta": "always" } });
        const seen = echoed(answer.body);
        assert.deepEqual(
          [seen.name, seen.url, seen.headers["x-dyed"]],
          ["beta", "/p?a=1&dyed=1", "beta"],
        );
        assert.equal(answer.headers["x-served-by"], "beta");
        const plain = await send("shop.test", "/p", { headers: { "x-beta": "never" } });
        assert.deepEqual([backendOf(plain), plain.headers["x-served-by"]], ["main", undefined]);
      });

      it("given an allowed Origin, echoes it; a preflight is answered 204 here; another Origin gets no CORS", async () => {
        const allowed = await send("shop.test", "/", { headers: { origin: "https://b.example" } });
        assert.equal(backendOf(allowed), "main");
        assert.equal(allowed.headers["access-control-allow-origin"], "https://b.example");
        assert.match(String(allowed.headers.vary), /Origin/);
        const preflight = await send("shop.test", "/", {
          method: "OPTIONS",
          headers: { origin: "https://a.example", "access-control-request-method": "PUT" },
        });
        assert.deepEqual([preflight.status, preflight.body], [204, ""]);
        assert.equal(preflight.headers["access-control-allow-origin"], "https://a.example");
        assert.match(String(preflight.headers["access-control-allow-methods"]), /PUT/);
        const other = await send("shop.test", "/", { headers: { origin: "https://evil.example" } });
        assert.equal(other.headers["access-control-allow-origin"], undefined);
      });

      it("given /robots.txt with disable-robots, answers deny-all without the backend", async () => {
        const robots = await send("shop.test", "/robots.txt");
        assert.deepEqual([robots.status, robots.body], [200, "User-agent: *\nDisallow: /\n"]);
      });

      it("given ssl-redirect by TLS, redirects plain HTTP with 308", async () => {
        const redirect = await send("secure.test", "/a?b=1");
        assert.equal(redirect.status, 308);
        assert.equal(redirect.headers.location, "https://secure.test/a?b=1");
      });

      it("given temporal-redirect, answers 302 to the URL as written, whatever the path", async () => {
        const moved = await send("moved.test", "/deep/path?x=1");
        assert.deepEqual([moved.status, moved.headers.location], [302, "https://new.example/home"]);
        const head = await send("moved.test", "/", { method: "HEAD" });
        assert.deepEqual([head.status, head.body], [302, ""]);
      });

      it("given app-root, redirects '/' with 302 and proxies the rest", async () => {
        const root = await send("app.test", "/?x=1");
        assert.deepEqual([root.status, root.headers.location], [302, "http://app.test/app1"]);
        assert.equal(backendOf(await send("app.test", "/app1")), "main");
      });

      it("given custom-http-errors and default-backend, a listed status is answered by the error backend", async () => {
        const answer = await send("pages.test", "/shop/item?status=404", {
          headers: { accept: "text/html" },
        });
        const seen = echoed(answer.body);
        assert.deepEqual([answer.status, seen.name, seen.url], [404, "errors", "/?status=404"]);
        assert.deepEqual(
          ["x-code", "x-format", "x-original-uri", "x-namespace", "x-ingress-name"].map(
            name => seen.headers[name],
          ),
          ["404", "text/html", "/shop/item?status=404", "default", "pages"],
        );
        assert.deepEqual(
          [seen.headers["x-service-name"], seen.headers["x-service-port"]],
          ["main", "80"],
        );
        const posted = await send("pages.test", "/form?status=503", {
          method: "POST",
          body: "a=1",
        });
        assert.deepEqual([posted.status, echoed(posted.body).name], [503, "errors"]);
        const other = await send("pages.test", "/?status=500");
        assert.deepEqual([other.status, echoed(other.body).name], [500, "main"]);
        const fine = await send("pages.test", "/again");
        assert.equal(backendOf(fine), "main");
      });

      it("given custom-http-errors without default-backend, the gateway's own page of the status answers", async () => {
        const answer = await send("plain-pages.test", "/?status=404");
        assert.equal(answer.status, 404);
        assert.doesNotMatch(answer.body, /"name"/);
      });

      it("given default-backend and a Service without endpoints, the default backend answers with X-Code 503", async () => {
        const answer = await send("empty.test", "/missing?x=1");
        const seen = echoed(answer.body);
        assert.deepEqual([answer.status, seen.name, seen.url], [200, "errors", "/missing?x=1"]);
        assert.deepEqual(
          [seen.headers["x-code"], seen.headers["x-service-name"]],
          ["503", "nobody"],
        );
      });

      it("given rewrite-target, the backend sees the rewritten path", async () => {
        assert.equal(echoed((await send("api.test", "/v1/users?x=1")).body).url, "/users?x=1");
      });
    });
  }

  it("counts every request of both paths in the traffic metrics, by variant and status class", async () => {
    const [metrics] = await plane.trafficMetrics();
    const requests = metrics?.find(m => m.name === "bulwark_gateway_requests_total");
    const count = (labels: Record<string, string>) =>
      (requests?.values ?? [])
        .filter(v => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
        .reduce((sum, v) => sum + v.value, 0);
    // Per path: canary 1, main 1 (never), CORS 3 (one preflight answered here), robots 1,
    // redirect 1, rewrite 1.
    assert.equal(count({ host: "shop.test", variant: "canary", status_class: "2xx" }), 2);
    assert.equal(count({ host: "shop.test", variant: "main", status_class: "2xx" }), 10);
    assert.equal(count({ host: "secure.test", status_class: "3xx" }), 2);
    assert.equal(count({ host: "api.test", status_class: "2xx" }), 2);
  });
});
