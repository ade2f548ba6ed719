// The gateway when the API server goes away: traffic keeps flowing through a 30 s outage under
// load with zero failed requests, and a gateway restarted during an outage serves its last good
// view from disk. The outage is a SIGSTOP of etcd and kube-apiserver of a control plane of this
// test's own, so the shared one (and the tests that use it) never notice.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../../hack/control-plane/control-plane";
import { applyOrThrow, loadKubeConfig } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { testCluster } from "../../harness/cluster";
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
const NS = "outage";
const OUTAGE_MS = 30_000;

interface Load {
  /** Replies so far. */
  count(): number;
  /** Stops the clients; returns every reply or error. */
  stop(): Promise<(Reply | string)[]>;
}

/** `loops` clients requesting `host` back to back until stopped. */
function load(port: number, host: string, loops: number): Load {
  const replies: (Reply | string)[] = [];
  let running = true;
  const one = async (): Promise<void> => {
    while (running) {
      replies.push(await get(port, host).catch((error: Error) => error.message));
      await new Promise(r => setTimeout(r, 5)); // pacing of the load, not a wait for anything
    }
  };
  const all = Promise.all(Array.from({ length: loops }, one));
  return {
    count: () => replies.length,
    stop: async () => {
      running = false;
      await all;
      return replies;
    },
  };
}

function failures(replies: (Reply | string)[], body: string): (Reply | string)[] {
  return replies.filter(r => typeof r === "string" || r.status !== 200 || r.body !== body);
}

describe("gateway during an API server outage", () => {
  let controlPlane: ControlPlane;
  let kc: KubeConfig;
  let backend: Backend;
  let gateway: RunningGateway;
  const dir = mkdtempSync(join(tmpdir(), "gw-outage-"));
  const stateDir = join(dir, "gateway-0");
  const paused = new Set<number>();

  const pause = (): void => {
    for (const p of controlPlane.processes) {
      process.kill(p.pid, "SIGSTOP");
      paused.add(p.pid);
    }
  };
  const resume = (): void => {
    for (const pid of paused) process.kill(pid, "SIGCONT");
    paused.clear();
  };

  before(async () => {
    controlPlane = await startControlPlane({ dir: join(dir, "cluster"), binDir: cluster.binDir });
    kc = loadKubeConfig(controlPlane.kubeconfigPath);
    await ensureIngressClass(kc);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    backend = await startBackend("steady");
    await applyOrThrow(kc, [
      endpointSlice(NS, "steady", backend.port),
      ingress(NS, "steady-1", { host: "steady.example.com", service: "steady" }),
    ]);
    gateway = await startGateway({
      kubeconfigPath: controlPlane.kubeconfigPath,
      namespace: NS,
      stateDir,
    });
    await waitServed(gateway.httpPort, "steady.example.com", "steady");
  });

  after(async () => {
    resume();
    await gateway?.stop();
    await backend?.close();
    await controlPlane?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves every request while the API server is stopped for 30 s under load", async () => {
    const traffic = load(gateway.httpPort, "steady.example.com", 4);
    await waitUntil("the load to be under way", () => traffic.count() >= 100);
    pause();
    try {
      await waitUntil("the gateway to notice the outage", async () => {
        return (await gateway.health()).apiServer?.reachable === false;
      });
      // Kept: the outage itself, the window in which no request may fail (asserted below).
      await new Promise(r => setTimeout(r, OUTAGE_MS));
      const health = await gateway.health();
      assert.equal(health.ready, true);
      assert.equal(health.apiServer?.reachable, false);
    } finally {
      resume();
    }
    // Still under load while the gateway reconnects.
    await waitUntil("the API server to be reachable again", async () => {
      return (await gateway.health()).apiServer?.reachable === true;
    });
    const replies = await traffic.stop();
    assert.ok(replies.length > 1000, `${replies.length} requests under load`);
    assert.deepEqual(failures(replies, "steady /").slice(0, 5), [], "no request failed");
    await applyOrThrow(kc, [
      ingress(NS, "after-2", { host: "after.example.com", service: "steady" }),
    ]);
    await waitServed(gateway.httpPort, "after.example.com", "steady");
  });

  it("a gateway restarted during an outage serves its last good view from disk", async () => {
    pause();
    try {
      await gateway.stop();
      gateway = await startGateway({
        kubeconfigPath: controlPlane.kubeconfigPath,
        namespace: NS,
        stateDir,
      });
      const health = await gateway.health();
      assert.equal(health.ready, true);
      assert.equal(health.view?.from, "disk");
      assert.equal(health.view?.ingresses, 2);
      const traffic = load(gateway.httpPort, "steady.example.com", 2);
      await waitUntil("500 replies from the view on disk", () => traffic.count() >= 500);
      const replies = await traffic.stop();
      assert.deepEqual(failures(replies, "steady /").slice(0, 5), []);
      assert.equal((await get(gateway.httpPort, "after.example.com")).body, "steady /");
    } finally {
      resume();
    }
    await waitUntil(
      "the restarted gateway to sync with the API server",
      async () => {
        return (await gateway.health()).view?.from === "api";
      },
      60_000,
    );
    await applyOrThrow(kc, [
      ingress(NS, "later-3", { host: "later.example.com", service: "steady" }),
    ]);
    await waitServed(gateway.httpPort, "later.example.com", "steady");
  });

  it("a gateway with no saved view and no API server reports not ready", async () => {
    pause();
    try {
      const fresh = await startGateway({
        kubeconfigPath: controlPlane.kubeconfigPath,
        namespace: NS,
        podName: "bulwark-gateway-7",
        waitReady: false,
      });
      try {
        await waitUntil(
          "the fresh gateway to find the API server unreachable",
          async () => (await fresh.health()).apiServer?.lastError !== undefined,
        );
        const ready = await fetch(`http://127.0.0.1:${fresh.adminPort}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal((await fresh.health()).ready, false);
      } finally {
        await fresh.stop();
      }
    } finally {
      resume();
    }
  });
});
