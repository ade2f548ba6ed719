// Provider breakers are each replica's own (permission-server/README.md, "Provider breakers"):
// with two replicas, an outage of the authorization API opens the breaker on both, no pod on
// either is charged a strike, and every pod ends granted after recovery; a path to the API that
// only one replica has lost opens only that replica's breaker, and the other keeps granting.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import type { RunningServer } from "../../../permission-server/server";
import {
  createPod,
  deleteProvider,
  podToken,
  runInitFor,
  setPodIp,
  startAuthzProvider,
  startRoutedReplicas,
} from "./helpers";

const cluster = testCluster();
const BREAKERS = "bulwark-permission-breakers";
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** A TCP forwarder to `port`; while `cut`, it drops every connection (a lost network path). */
async function tcpProxy(
  port: number,
): Promise<{ url: string; cut: (on: boolean) => void; close: () => void }> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer(client => {
    if (cut) return void client.destroy();
    const upstream = createConnection(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
  const address = server.address() as { port: number };
  const dropAll = (): void => sockets.forEach(s => s.destroy());
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: on => {
      cut = on;
      if (on) dropAll();
    },
    close: () => {
      server.close();
      dropAll();
    },
  };
}

async function breakerOpen(server: RunningServer, provider: string): Promise<boolean> {
  const metric = await server.metrics.providerBreakerOpen.get();
  return metric.values.some(v => v.labels.provider === provider && v.value === 1);
}

describe("permission server: provider breakers with two replicas", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let provider: string;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let servers: RunningServer[];

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-pbrk");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 200 }, 1));
    proxy = await tcpProxy(authz.port);
    // Replica 1 reaches the API through the proxy: its own network path, which the test can cut.
    servers = await startRoutedReplicas(cluster, ns, {
      count: 2,
      route: (replica, spec) => (replica === 1 ? { ...spec, address: proxy.url } : spec),
    });
  });

  after(async () => {
    for (const server of servers) await server.stop();
    proxy.close();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
  });

  async function startedPod(name: string, ip: string): Promise<{ pod: V1Pod; token: string }> {
    await createPod(cluster, ns, name, "readers");
    const pod = await setPodIp(cluster, ns, name, ip);
    return { pod, token: await podToken(cluster, pod) };
  }

  async function breakerEntries(): Promise<string[]> {
    try {
      const cm = await cluster.core.readNamespacedConfigMap({ name: BREAKERS, namespace: ns });
      return Object.keys(cm.data ?? {});
    } catch {
      return [];
    }
  }

  it("an outage opens both replicas' breakers; no pod is charged; all are granted after it", async () => {
    await authz.setOutage("refuse");
    const pods = [];
    for (let i = 1; i <= 4; i++) pods.push(await startedPod(`outage-${i}`, `127.0.8.${i}`));
    // Pods 1, 3 on replica 0; 2, 4 on replica 1 (the replica a pod calls first claims it).
    const inits = pods.map(({ pod, token }, i) =>
      runInitFor((servers[i % 2] as RunningServer).url, pod, token),
    );
    for (const server of servers) {
      await waitUntil(
        "each replica's breaker to open",
        () => breakerOpen(server, provider),
        20_000,
      );
    }
    // Kept: longer than the grant timeout (5s), proving time with the breaker open is NOT counted
    // (no strike lands); there is no event to wait for when nothing happens.
    await sleep(6000);
    assert.deepEqual(await breakerEntries(), [], "no strike against any pod during the outage");
    await authz.setOutage(false);
    assert.deepEqual(
      await Promise.all(inits),
      pods.map(() => ({ granted: true })),
    );
    for (let i = 1; i <= 4; i++) assert.ok(authz.isGranted(`127.0.8.${i}`, "orders", "read"));
    assert.deepEqual(await breakerEntries(), []);
  });

  it("one replica's lost path opens only its breaker; the other keeps granting; it recovers", async () => {
    proxy.cut(true);
    const cutOff = await startedPod("cut-off", "127.0.8.11");
    const stranded = runInitFor((servers[1] as RunningServer).url, cutOff.pod, cutOff.token);
    await waitUntil(
      "replica 1's breaker to open",
      () => breakerOpen(servers[1] as RunningServer, provider),
      20_000,
    );
    assert.equal(await breakerOpen(servers[0] as RunningServer, provider), false);
    const healthy = await startedPod("healthy", "127.0.8.12");
    assert.deepEqual(
      await runInitFor((servers[0] as RunningServer).url, healthy.pod, healthy.token),
      { granted: true },
      "a shared breaker would have stopped replica 0 too",
    );
    assert.equal(authz.isGranted("127.0.8.11", "orders", "read"), false);
    assert.deepEqual(await breakerEntries(), [], "the stranded pod is waiting, not charged");
    proxy.cut(false);
    assert.deepEqual(await stranded, { granted: true }, "granted once replica 1's path is back");
  });
});
