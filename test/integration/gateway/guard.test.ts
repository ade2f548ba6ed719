// The checksum guard in the gateway process: an Ingress update that matches no IngressCheckSum
// is kept out (the last good view keeps serving, with no failed request), is counted and shown
// in /healthz; publishing a matching checksum lets it in. A fresh gateway whose data matches no
// checksum never becomes ready.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { computeChecksum } from "../../../core/checksum";
import { nextCreationSecond, testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  get,
  ingress,
  startBackend,
  startGateway,
  waitServed,
  type Backend,
  type Reply,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const HOST = "guarded.example.com";
const VERSION = "nginx.ingress.kubernetes.io/version";

function checksumObject(namespace: string, name: string, ids: string[]) {
  const objects = ids.map(id => {
    const [n, v] = id.split("-");
    return { metadata: { name: `shop-${n}`, annotations: { [VERSION]: v ?? "" } } };
  });
  const { checksum } = computeChecksum("Ingress", "tengine", objects);
  return {
    apiVersion: "tengine.taobao.org/v1",
    kind: "IngressCheckSum",
    metadata: { name, namespace },
    spec: { timestamp: new Date().toISOString(), checksum, ids, mode: "tengine" },
  };
}

/** Requests `host` every few ms until stopped; `replies` holds every reply or error text so far. */
function keepRequesting(
  port: number,
  host: string,
): { replies: (Reply | string)[]; stop: () => Promise<(Reply | string)[]> } {
  const replies: (Reply | string)[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      replies.push(await get(port, host).catch((error: Error) => error.message));
      await new Promise(r => setTimeout(r, 20)); // pacing of the requests, not a wait
    }
  })();
  const stop = async () => {
    running = false;
    await loop;
    return replies;
  };
  return { replies, stop };
}

describe("gateway checksum guard", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let blue: Backend;
  let green: Backend;
  let gateway: RunningGateway;
  // The test's namespace is this gateway's publisher namespace (the watcher ignores it).
  let env: NodeJS.ProcessEnv;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-guard");
    env = { BULWARK_INGRESS_CHECKSUM: "true", BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: ns };
    await ensureIngressClass(cluster.kc);
    [blue, green] = [await startBackend("blue"), await startBackend("green")];
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "blue", blue.port),
      endpointSlice(ns, "green", green.port),
      ingress(ns, "shop-1", { host: HOST, service: "blue", annotations: { [VERSION]: "1" } }),
      checksumObject(ns, "checksum-a", ["1-1"]),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns, env });
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([blue?.close(), green?.close()]);
    await removeNamespace?.();
  });

  it("serves data that matches a published checksum", async () => {
    assert.equal((await waitServed(gateway.httpPort, HOST, "blue")).body, "blue /");
    const health = await gateway.health();
    assert.equal(health.guard.ingress?.state, "matched");
    assert.equal(health.guard.ingress?.accepted, true);
  });

  it("keeps a mismatching update out while traffic flows, then lets it in once a checksum matches", async () => {
    const traffic = keepRequesting(gateway.httpPort, HOST);
    await applyOrThrow(cluster.kc, [
      ingress(ns, "shop-1", { host: HOST, service: "green", annotations: { [VERSION]: "2" } }),
    ]);
    const refused = await waitUntil("the update to be refused", async () => {
      const health = await gateway.health();
      const guard = health.guard.ingress;
      return guard?.state === "mismatch" && guard.refusedUpdates > 0 ? health : undefined;
    });
    assert.equal(refused.guard.ingress?.accepted, false);
    assert.equal(refused.guard.ingress?.refusal, "mismatch");
    // Refused in the composition /healthz reports: that composition did not apply the view.
    const during = await get(gateway.httpPort, HOST);
    assert.deepEqual(during, { status: 200, body: "blue /" }, "the last good view still serves");
    const metrics = await (await fetch(`http://127.0.0.1:${gateway.adminPort}/metrics`)).text();
    assert.match(metrics, /^bulwark_gateway_checksum_mismatches_total\{kind="ingress"\} [1-9]/m);
    assert.match(metrics, /^bulwark_gateway_checksum_mismatch\{kind="ingress"\} 1$/m);

    await applyOrThrow(cluster.kc, [checksumObject(ns, "checksum-b", ["1-2"])]);
    await waitServed(gateway.httpPort, HOST, "green");
    // waitServed may have met the new view before the steady requests did: let them meet it too.
    await waitUntil("the steady requests to reach green", async () =>
      traffic.replies.some(r => typeof r !== "string" && r.body === "green /"),
    );
    const replies = await traffic.stop();
    const failures = replies.filter(r => typeof r === "string" || r.status !== 200);
    assert.deepEqual(failures, [], "no request failed");
    const bodies = new Set(replies.map(r => (typeof r === "string" ? r : r.body)));
    assert.deepEqual([...bodies].sort(), ["blue /", "green /"]);
    assert.equal((await gateway.health()).guard.ingress?.state, "matched");
  });

  it("a fresh gateway whose data matches no checksum is never ready", async () => {
    await applyOrThrow(cluster.kc, [
      ingress(ns, "shop-1", { host: HOST, service: "blue", annotations: { [VERSION]: "3" } }),
    ]);
    const fresh = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      podName: "bulwark-gateway-5",
      env,
      waitReady: false,
    });
    try {
      await waitUntil("the fresh gateway to see the mismatch", async () => {
        return (await fresh.health()).guard.ingress?.state === "mismatch";
      });
      const ready = await fetch(`http://127.0.0.1:${fresh.adminPort}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal((await fresh.health()).ready, false);
      assert.equal(
        (await get(fresh.httpPort, HOST)).status,
        404,
        "it serves no route it was not given",
      );
    } finally {
      await fresh.stop();
    }
  });

  it("trusts the checksum before the newest only for the grace period: an older attested state is then refused", async () => {
    // The cluster is at version 3; checksum-c attests it, then checksum-d attests a version 4
    // that never lands (or was rolled back).
    const windowed = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      podName: "bulwark-gateway-6",
      env: { ...env, BULWARK_CHECKSUM_GRACE_SECONDS: "4" },
      waitReady: false,
    });
    try {
      await applyOrThrow(cluster.kc, [checksumObject(ns, "checksum-c", ["1-3"])]);
      await waitUntil("version 3 to be attested", async () => {
        return (await windowed.health()).guard.ingress?.state === "matched";
      });
      await nextCreationSecond(Date.now());
      await applyOrThrow(cluster.kc, [checksumObject(ns, "checksum-d", ["1-4"])]);
      const publishedAt = Date.now();
      // Kept: that the state does NOT flip to mismatch at once (the grace period) needs the
      // gateway to have had a moment to see checksum-d, which /healthz does not show.
      await new Promise(r => setTimeout(r, 500));
      assert.equal(
        (await windowed.health()).guard.ingress?.state,
        "matched",
        "within the grace period",
      );
      const refused = await waitUntil("the grace period to end", async () => {
        const health = await windowed.health();
        return health.guard.ingress?.state === "mismatch" ? health : undefined;
      });
      assert.ok(Date.now() - publishedAt >= 2500, "not before the grace period ends");
      assert.equal(refused.guard.ingress?.refusal, "mismatch");
    } finally {
      await windowed.stop();
    }
  });

  it("in observe mode serves what enforce would refuse, and says so in /healthz and /metrics", async () => {
    const observing = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      podName: "bulwark-gateway-7",
      env: { ...env, BULWARK_INGRESS_CHECKSUM: "observe" },
    });
    const wouldRefuse = async (port: number) => {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return /^bulwark_gateway_checksum_would_refuse\{kind="ingress"\} (\d)$/m.exec(metrics)?.[1];
    };
    try {
      // Version 5 is attested by no checksum object: enforce would keep it out; observe serves it.
      await applyOrThrow(cluster.kc, [
        ingress(ns, "shop-1", { host: HOST, service: "green", annotations: { [VERSION]: "5" } }),
      ]);
      await waitServed(observing.httpPort, HOST, "green");
      const health = await waitUntil("the mismatch to be reported", async () => {
        const current = await observing.health();
        return current.guard.ingress?.state === "mismatch" ? current : undefined;
      });
      assert.equal(health.ready, true);
      assert.equal(health.guard.ingress?.mode, "observe");
      assert.equal(health.guard.ingress?.wouldRefuse, "mismatch");
      assert.equal(health.guard.ingress?.accepted, true);
      assert.equal(await wouldRefuse(observing.adminPort), "1");

      await applyOrThrow(cluster.kc, [checksumObject(ns, "checksum-e", ["1-5"])]);
      await waitUntil("the attestation to be seen", async () => {
        return (await observing.health()).guard.ingress?.state === "matched";
      });
      assert.equal((await observing.health()).guard.ingress?.wouldRefuse, undefined);
      assert.equal(await wouldRefuse(observing.adminPort), "0");
    } finally {
      await observing.stop();
    }

    // Nothing published where this one trusts: enforce would never become ready; observe serves.
    const unattested = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      podName: "bulwark-gateway-8",
      env: {
        ...env,
        BULWARK_INGRESS_CHECKSUM: "observe",
        BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: "nothing-published-here",
      },
    });
    try {
      // Ready (observe mode) does not wait for the backend's EndpointSlice: once in, it is served.
      assert.equal((await waitServed(unattested.httpPort, HOST, "green")).body, "green /");
      assert.equal((await unattested.health()).guard.ingress?.wouldRefuse, "no-checksum");
    } finally {
      await unattested.stop();
    }
  });
});
