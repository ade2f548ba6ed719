// Source ranges and trusted proxies end to end: the real API server admits (or refuses) the
// annotations through the Pepr module, a real gateway process serves them to clients connecting
// from different loopback addresses (127.0.0.0/8 is all loopback on Linux).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const PROXY = "127.0.0.9";

describe("source ranges end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;

  before(async () => {
    space = await openNamespace("traffic-access", ["web"]);
    const ns = space.ns;
    const route = (name: string, annotations: Record<string, string>) =>
      ingress(ns, name, { host: `${name}.test`, service: "web", annotations: nginx(annotations) });
    await space.apply([
      route("open", {}),
      route("office", { "whitelist-source-range": "127.0.0.2, 203.0.113.0/24" }),
      route("blocked", { "denylist-source-range": "127.0.0.3,198.51.100.0/24" }),
    ]);
    served = await openGateway(
      ns,
      { BULWARK_TRUSTED_PROXIES: PROXY },
      { host: "open.test", backend: "web" },
    );
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  const from = (localAddress: string, host: string, headers: Record<string, string> = {}) =>
    served.client.send(host, "/", { localAddress, headers });

  it("serves the allowlist and answers 403 to everyone else", async () => {
    assert.equal(echoOf(await from("127.0.0.2", "office.test"))?.name, "web");
    const outside = await from("127.0.0.4", "office.test");
    assert.equal(outside.status, 403);
    assert.equal((await from("127.0.0.3", "blocked.test")).status, 403);
    assert.equal(echoOf(await from("127.0.0.4", "blocked.test"))?.name, "web");
  });

  it("believes X-Forwarded-For only from the trusted proxy", async () => {
    const spoofed = await from("127.0.0.4", "office.test", { "x-forwarded-for": "203.0.113.8" });
    assert.equal(spoofed.status, 403);
    const proxied = await from(PROXY, "office.test", { "x-forwarded-for": "203.0.113.8" });
    assert.equal(echoOf(proxied)?.name, "web");
    assert.equal(echoOf(proxied)?.headers["x-real-ip"], "203.0.113.8");
    const denied = await from(PROXY, "blocked.test", { "x-forwarded-for": "198.51.100.20" });
    assert.equal(denied.status, 403);
  });

  it("refuses a malformed range at admission, naming the annotation and the entry", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "bad-range", {
      host: "bad.test",
      service: "web",
      annotations: nginx({ "allowlist-source-range": "10.0.0.0/8, office-lan" }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/allowlist-source-range"\]: expected a comma-separated list of IP addresses or CIDRs, got "10\.0\.0\.0\/8, office-lan" \(\\?"office-lan\\?" is neither\)/,
    );
  });
});
