// permanent/temporal-redirect, app-root, from-to-www-redirect, server-alias and custom-http-errors
// with default-backend, end to end through the real API server, a gateway process and real backends.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KubernetesObject, V1Service } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  type Client,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

function errorsService(ns: string): KubernetesObject {
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace: ns, name: "errors" },
    spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
  };
  return service;
}

describe("redirects and answers end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;
  let client: Client;

  before(async () => {
    space = await openNamespace("traffic-redirects", ["web", "errors"]);
    const ns = space.ns;
    const route = (name: string, host: string, annotations: Record<string, string>) =>
      ingress(ns, name, { host, service: "web", annotations: nginx(annotations) });
    await space.apply([
      // default-backend takes the Service's first port, so the Service must exist.
      errorsService(ns),
      route("moved", "moved.test", {
        "permanent-redirect": "https://www.google.com",
        "permanent-redirect-code": "308",
      }),
      route("temp", "temp.test", { "temporal-redirect": "https://www.google.com" }),
      route("app", "app.test", { "app-root": "/app1" }),
      route("www", "example.test", { "from-to-www-redirect": "true" }),
      route("alias", "shop.test", { "server-alias": "store.test" }),
      route("pages", "pages.test", {
        "custom-http-errors": "404,503",
        "default-backend": "errors",
      }),
      route("ready", "ready.test", {}),
    ]);
    served = await openGateway(
      ns,
      { BULWARK_ACCESS_LOG: "false" },
      { host: "ready.test", backend: "web" },
    );
    client = served.client;
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  it("given ingress-nginx's permanent-redirect example with code 308, answers 308 to the URL as written", async () => {
    const answer = await client.send("moved.test", "/any/path?x=1");
    assert.deepEqual([answer.status, answer.headers.location], [308, "https://www.google.com"]);
  });

  it("given temporal-redirect, answers 302", async () => {
    const answer = await client.send("temp.test", "/");
    assert.deepEqual([answer.status, answer.headers.location], [302, "https://www.google.com"]);
  });

  it("given app-root, '/' gets 302 to the root and other paths reach the backend", async () => {
    const root = await client.send("app.test", "/");
    assert.deepEqual([root.status, root.headers.location], [302, "http://app.test/app1"]);
    assert.equal(echoOf(await client.send("app.test", "/app1"))?.url, "/app1");
  });

  it("given from-to-www-redirect on example.test, www.example.test gets 308 to example.test", async () => {
    const answer = await client.send("www.example.test", "/a?b=1");
    assert.deepEqual([answer.status, answer.headers.location], [308, "http://example.test/a?b=1"]);
    assert.equal(echoOf(await client.send("example.test", "/a"))?.name, "web");
  });

  it("given server-alias, the alias is served by the host's rules", async () => {
    assert.equal(echoOf(await client.send("store.test", "/p"))?.name, "web");
  });

  it("given custom-http-errors with default-backend, a 404 of the backend is the error backend's answer", async () => {
    const answer = await client.send("pages.test", "/item?status=404", {
      headers: { accept: "application/json" },
    });
    const echo = echoOf(answer);
    assert.deepEqual([answer.status, echo?.name, echo?.url], [404, "errors", "/?status=404"]);
    assert.deepEqual(
      [echo?.headers["x-code"], echo?.headers["x-format"], echo?.headers["x-original-uri"]],
      ["404", "application/json", "/item?status=404"],
    );
    assert.equal(echoOf(await client.send("pages.test", "/item"))?.name, "web");
  });
});
