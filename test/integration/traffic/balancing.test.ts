// upstream-hash-by end to end: the real API server admits (or refuses) the annotations through the
// Pepr module, a real gateway process hashes requests over a Service with three endpoints (three
// echo backends on this machine, one EndpointSlice each, as a Service with several slices has).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  poolSlice,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const POOL = ["pool-a", "pool-b", "pool-c"];

describe("load balancing end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;

  before(async () => {
    space = await openNamespace("traffic-balancing", POOL);
    const ns = space.ns;
    const slices = POOL.map(name => poolSlice(ns, name, space.backends.get(name)!.port));
    const route = (name: string, annotations: Record<string, string>) =>
      ingress(ns, name, { host: `${name}.test`, service: "pool", annotations: nginx(annotations) });
    await space.apply([
      ...slices,
      route("plain", {}),
      route("by-user", { "upstream-hash-by": "$http_x_user" }),
      route("by-uri", { "upstream-hash-by": "${request_uri}-v1", "load-balance": "ewma" }),
      route("fastest", { "load-balance": "ewma" }),
    ]);
    // Waits until round-robin has reached pool-a: the slices are in the gateway's view.
    served = await openGateway(ns, {}, { host: "plain.test", backend: "pool-a" });
    const seen = new Set<string>();
    await waitUntil("every slice of pool served", async () => {
      const echo = echoOf(await served.client.send("plain.test", "/"));
      if (echo !== undefined) seen.add(echo.name);
      return seen.size === POOL.length ? true : undefined;
    });
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  const backend = async (host: string, path: string, headers: Record<string, string> = {}) => {
    const echo = echoOf(await served.client.send(host, path, { headers }));
    assert.ok(echo !== undefined, `${host}${path} was not proxied`);
    return echo.name;
  };

  it("round-robins a route without annotations over every endpoint", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(await backend("plain.test", "/"));
    assert.deepEqual([...seen].sort(), POOL);
  });

  it("sends each user to one endpoint, and the users to more than one", async () => {
    const owners = new Set<string>();
    // Random values: CRC32 (the ring's hash) of values as alike as user-0…user-11 can put them all
    // on one endpoint for some backend ports.
    for (let user = 0; user < 12; user++) {
      const headers = { "x-user": `user-${randomUUID()}` };
      const first = await backend("by-user.test", "/", headers);
      for (let again = 0; again < 3; again++) {
        assert.equal(await backend("by-user.test", `/page/${again}`, headers), first);
      }
      owners.add(first);
    }
    assert.ok(owners.size >= 2, [...owners].join(","));
  });

  it("hashes by URI and text, the hash taking precedence over ewma", async () => {
    for (let n = 0; n < 6; n++) {
      const first = await backend("by-uri.test", `/item/${n}`);
      for (let again = 0; again < 3; again++) {
        assert.equal(await backend("by-uri.test", `/item/${n}`), first);
      }
    }
  });

  it("serves an ewma route from its endpoints", async () => {
    for (let i = 0; i < 6; i++) assert.ok(POOL.includes(await backend("fastest.test", "/")));
  });

  it("refuses an unknown hash variable and an unknown algorithm at admission, naming each key", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "bad-balance", {
      host: "bad.test",
      service: "pool",
      annotations: nginx({ "upstream-hash-by": "$upstream_addr", "load-balance": "least_conn" }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/load-balance"\]: expected "round_robin" or "ewma", got \\?"least_conn\\?"/,
    );
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/upstream-hash-by"\]: expected variables .* \(\$upstream_addr is not a variable Bulwark reads\)/,
    );
  });
});
