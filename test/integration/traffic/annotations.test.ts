// CORS, robots, ssl-redirect, rewrite-target and the proxy timeouts and body limit, end to end
// through the real API server, a real gateway process and real backends.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ingress, endpointSlice } from "../gateway/harness";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  startStalledListener,
  type Client,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const CORS = nginx({
  "enable-cors": "true",
  "cors-allow-origin": "https://shop.example, https://*.partner.example",
  "cors-allow-methods": "GET, PUT",
  "cors-allow-headers": "X-Token",
  "cors-max-age": "600",
});

describe("traffic annotations end to end", () => {
  let space: TrafficNamespace;
  let stalled: { port: number; close(): void };
  let served: TrafficGateway;
  let client: Client;

  before(async () => {
    space = await openNamespace("traffic-annotations", ["web"]);
    stalled = await startStalledListener();
    const ns = space.ns;
    const route = (
      name: string,
      host: string,
      annotations: Record<string, string>,
      service = "web",
    ) => ingress(ns, name, { host, service, annotations: nginx(annotations) });
    await space.apply([
      endpointSlice(ns, "void", stalled.port),
      ingress(ns, "cors", { host: "cors.test", service: "web", annotations: CORS }),
      route("robots", "robots.test", { "disable-robots": "true" }),
      // ssl-redirect needs a certificate for the host (ingress-nginx's redirect_to_https).
      tlsSecret(ns, "redirect-tls", makeCertificate({ key: "ecdsa", dnsNames: ["redirect.test"] })),
      ingress(ns, "redirect", {
        host: "redirect.test",
        service: "web",
        tlsSecrets: ["redirect-tls"],
      }),
      route("redirect-off", "redirect-off.test", { "ssl-redirect": "true" }),
      route("force", "force.test", { "force-ssl-redirect": "true" }),
      ingress(ns, "rewrite", {
        host: "rewrite.test",
        service: "web",
        path: "/api(/|$)(.*)",
        annotations: nginx({ "rewrite-target": "/v2/$2", "use-regex": "true" }),
      }),
      route("slow", "slow.test", { "proxy-read-timeout": "1" }),
      route("void", "void.test", { "proxy-connect-timeout": "1" }, "void"),
      route("small", "small.test", { "proxy-body-size": "1k" }),
    ]);
    served = await openGateway(
      ns,
      { BULWARK_ACCESS_LOG: "false" },
      { host: "cors.test", backend: "web" },
    );
    client = served.client;
  });

  after(async () => {
    await served?.close();
    stalled?.close();
    await space?.close();
  });

  it("given an allowed Origin, the backend's answer echoes that origin (never the list) with Vary and credentials", async () => {
    for (const origin of ["https://shop.example", "https://eu.partner.example"]) {
      const answer = await client.send("cors.test", "/items", { headers: { origin } });
      assert.equal(echoOf(answer)?.name, "web");
      assert.equal(answer.headers["access-control-allow-origin"], origin);
      assert.equal(answer.headers["access-control-allow-credentials"], "true");
      assert.match(String(answer.headers.vary), /\bOrigin\b/);
    }
  });

  it("given a preflight from an allowed origin, the gateway answers 204 with methods, headers and max-age", async () => {
    const answer = await client.send("cors.test", "/items", {
      method: "OPTIONS",
      headers: { origin: "https://shop.example", "access-control-request-method": "PUT" },
    });
    assert.deepEqual([answer.status, answer.body, echoOf(answer)], [204, "", undefined]);
    assert.equal(answer.headers["access-control-allow-origin"], "https://shop.example");
    assert.equal(answer.headers["access-control-allow-methods"], "GET, PUT");
    assert.equal(answer.headers["access-control-allow-headers"], "X-Token");
    assert.equal(answer.headers["access-control-max-age"], "600");
  });

  it("given a disallowed Origin, no CORS header; its OPTIONS goes to the backend", async () => {
    for (const origin of [
      "https://evil.example",
      "https://a.b.partner.example",
      "http://shop.example",
    ]) {
      const answer = await client.send("cors.test", "/", { headers: { origin } });
      assert.equal(answer.headers["access-control-allow-origin"], undefined, origin);
    }
    const preflight = await client.send("cors.test", "/", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "PUT" },
    });
    assert.equal(echoOf(preflight)?.name, "web");
    assert.equal(preflight.headers["access-control-allow-origin"], undefined);
  });

  it("given disable-robots, /robots.txt is the deny-all file and other paths reach the backend", async () => {
    const robots = await client.send("robots.test", "/robots.txt");
    assert.deepEqual(
      [robots.status, robots.body, echoOf(robots)],
      [200, "User-agent: *\nDisallow: /\n", undefined],
    );
    assert.equal(echoOf(await client.send("robots.test", "/page"))?.url, "/page");
  });

  it("given a certificate for the host or force-ssl-redirect, plain HTTP gets 308 to the same target on https", async () => {
    for (const host of ["redirect.test", "force.test"]) {
      const answer = await client.send(host, "/cart?id=3", { method: "POST", body: "x" });
      assert.equal(answer.status, 308);
      assert.equal(answer.headers.location, `https://${host}/cart?id=3`);
    }
  });

  it("given ssl-redirect true but no certificate for the host, proxies plain HTTP (as ingress-nginx)", async () => {
    const answer = await client.send("redirect-off.test", "/cart");
    assert.equal(answer.status, 200);
  });

  it("given rewrite-target with use-regex, the backend sees the captured path and the query", async () => {
    const cases: [string, string][] = [
      ["/api/users/7?full=1", "/v2/users/7?full=1"],
      ["/api", "/v2/"],
      ["/API/x", "/v2/x"],
    ];
    for (const [sent, seen] of cases) {
      assert.equal(echoOf(await client.send("rewrite.test", sent))?.url, seen, sent);
    }
  });

  it("given proxy-read-timeout 1, a backend slower than that gets 504 after about a second", async () => {
    const started = Date.now();
    const answer = await client.send("slow.test", "/?ms=3000");
    const took = Date.now() - started;
    assert.equal(answer.status, 504);
    assert.ok(took >= 900 && took < 2500, `took ${took} ms`);
    assert.equal((await client.send("slow.test", "/?ms=100")).status, 200);
  });

  it("given proxy-connect-timeout 1, an endpoint that never accepts gets 504 after about a second", async () => {
    const started = Date.now();
    const answer = await client.send("void.test", "/");
    const took = Date.now() - started;
    assert.equal(answer.status, 504);
    // One connect timeout, not two: a request written before the connection is made waits in
    // the socket whole, which is no progress of its queue.
    assert.ok(took >= 900 && took < 1900, `took ${took} ms`);
  });

  it("given proxy-body-size 1k, a larger body gets 413 and a smaller one passes", async () => {
    const big = await client.send("small.test", "/", { method: "POST", body: "x".repeat(2048) });
    assert.equal(big.status, 413);
    const small = await client.send("small.test", "/", { method: "POST", body: "x".repeat(512) });
    assert.equal(echoOf(small)?.name, "web");
  });
});
