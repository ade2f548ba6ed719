// External auth end to end: the real API server admits (or refuses) the auth-* annotations
// through the Pepr module, a real gateway process asks our oauth2-proxy-style auth server about
// every request, and answers, redirects or proxies as ingress-nginx does; an auth server that is
// down or never connects makes the route answer 500.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress, localAddress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import { startOAuth2StandIn, type OAuth2StandIn } from "../../harness/oauth2-stand-in";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  scrape,
  startStalledListener,
  total,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

describe("external auth end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;
  let auth: OAuth2StandIn;
  let stalled: { port: number; close(): void };

  before(async () => {
    auth = await startOAuth2StandIn();
    auth.addSession("alice-token", { user: "alice", email: "alice@example.com", groups: [] });
    stalled = await startStalledListener();
    space = await openNamespace("traffic-auth", ["web"]);
    const ns = space.ns;
    const route = (name: string, annotations: Record<string, string>) =>
      ingress(ns, name, { host: `${name}.test`, service: "web", annotations: nginx(annotations) });
    const authUrl = `${auth.origin}/oauth2/auth`;
    await space.apply([
      route("open", {}),
      route("app", {
        "auth-url": authUrl,
        "auth-signin": "https://login.example.com/oauth2/start",
        "auth-response-headers": "X-Auth-Request-User,X-Auth-Request-Email",
        "auth-cache-key": "$cookie__oauth2_proxy",
        "auth-cache-duration": "202 1m",
      }),
      route("stalled", { "auth-url": `http://${localAddress()}:${stalled.port}/auth` }),
    ]);
    served = await openGateway(
      ns,
      { BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS: "1", BULWARK_AUTH_READ_TIMEOUT_SECONDS: "2" },
      { host: "open.test", backend: "web" },
    );
  });

  after(async () => {
    await served?.close();
    await space?.close();
    await auth?.close();
    stalled?.close();
  });

  it("proxies a signed-in user's request with the auth server's headers, the client's dropped", async () => {
    const answer = await served.client.send("app.test", "/cart", {
      headers: { cookie: "_oauth2_proxy=alice-token", "x-auth-request-user": "admin" },
    });
    const echo = echoOf(answer);
    assert.equal(echo?.name, "web");
    assert.equal(echo?.headers["x-auth-request-user"], "alice");
    assert.equal(echo?.headers["x-auth-request-email"], "alice@example.com");
  });

  it("answers from the cache within auth-cache-duration", async () => {
    const before = auth.seen.length;
    for (let i = 0; i < 3; i++) {
      const answer = await served.client.send("app.test", "/", {
        headers: { cookie: "_oauth2_proxy=alice-token" },
      });
      assert.equal(echoOf(answer)?.name, "web");
    }
    assert.equal(auth.seen.length, before, "alice's 202 was cached by the first test");
  });

  it("redirects a request without a session to auth-signin, rd naming the original URL", async () => {
    const answer = await served.client.send("app.test", "/cart?item=1");
    assert.equal(answer.status, 302);
    assert.equal(
      answer.headers.location,
      "https://login.example.com/oauth2/start?rd=http://app.test%2Fcart%3Fitem%3D1",
    );
  });

  it("answers 500 when the auth server cannot be connected to in time", async () => {
    const answer = await served.client.send("stalled.test", "/");
    assert.equal(answer.status, 500);
    assert.equal(echoOf(answer), undefined);
  });

  it("answers 500 while the auth server is down, for a user it has not cached", async () => {
    await auth.setOutage("refuse");
    try {
      const answer = await served.client.send("app.test", "/", {
        headers: { cookie: "_oauth2_proxy=bob-token" },
      });
      assert.equal(answer.status, 500);
    } finally {
      await auth.setOutage(false);
    }
  });

  it("counts the auth answers by host and decision", async () => {
    const samples = await scrape(served.gateway.adminPort);
    const answers = "bulwark_gateway_answers_total";
    assert.equal(total(samples, answers, { host: "app.test", decision: "auth-signin" }), 1);
    assert.equal(total(samples, answers, { host: "app.test", decision: "auth-error" }), 1);
    assert.equal(total(samples, answers, { host: "stalled.test", decision: "auth-error" }), 1);
  });

  it("refuses bad values at admission, naming the annotation and what was expected", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "bad-auth", {
      host: "bad.test",
      service: "web",
      annotations: nginx({
        "auth-url": "auth-service/check",
        "auth-method": "get",
        "auth-response-headers": "X-User X-Email",
      }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(message, /auth-url"\]: expected an http:\/\/ or https:\/\/ URL/);
    assert.match(message, /auth-method"\]: expected one of GET, HEAD, POST/);
    assert.match(message, /auth-response-headers"\]: expected header names/);
  });

  it("refuses auth-url's $host on a wildcard host at admission: the client would pick its judge", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const wild = ingress(space.ns, "wild-auth", {
      host: "*.wild.test",
      service: "web",
      annotations: nginx({ "auth-url": "https://$host/oauth2/auth" }),
    });
    const message = await rejection(() => objects.create(wild));
    assert.match(message, /auth-url"\]: expected an auth server's own host/);
  });

  it("refuses auth-snippet at admission as a security control Bulwark does not run", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const snippet = ingress(space.ns, "snippet-auth", {
      host: "snippet.test",
      service: "web",
      annotations: nginx({ "auth-url": "http://a.example/auth", "auth-snippet": "return 200;" }),
    });
    const message = await rejection(() => objects.create(snippet));
    assert.match(message, /auth-snippet.*security control/);
  });
});
