// Several data-plane workers (BULWARK_WORKERS=2, node:cluster) against the real API server: after
// every change, /healthz reports one view version on every worker, and from then on every request
// over a fresh connection (the primary hands connections to the workers in turn) sees the new
// routes: no worker still serves the old snapshot once the version is reported.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  localAddress,
  startGateway,
  waitServed,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const WORKERS = 2;
const CHANGES = 4;
const FRESH_CONNECTIONS = 40;

/** A backend answering `<name> <path>` that remembers which upstream connections reached it. */
interface CountingBackend {
  name: string;
  port: number;
  sockets: Set<string>;
  server: Server;
}

async function countingBackend(name: string): Promise<CountingBackend> {
  const sockets = new Set<string>();
  const server = createServer((req, res) => {
    sockets.add(`${req.socket.remoteAddress ?? ""}:${req.socket.remotePort ?? 0}`);
    const body = `${name} ${req.url ?? "/"}`;
    res.writeHead(200, { "content-length": Buffer.byteLength(body) }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>(resolve => server.listen(0, localAddress(), resolve));
  const address = server.address();
  return { name, port: typeof address === "object" && address ? address.port : 0, sockets, server };
}

/** One request on a connection of its own (no agent, Connection: close). */
function freshGet(port: number, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, agent: false, headers: { host, connection: "close" } },
      res => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(`${res.statusCode ?? 0} ${body}`));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${host}${path}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** Round `round`'s Ingress: its host and the one every round keeps, both to `service`. */
function roundIngress(namespace: string, round: number, service: string): KubernetesObject {
  const path = (p: string) => ({
    path: p,
    pathType: "Prefix",
    backend: { service: { name: service, port: { number: 80 } } },
  });
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "workers-1", namespace },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        { host: "stable.example.com", http: { paths: [path("/")] } },
        { host: `round-${round}.example.com`, http: { paths: [path("/")] } },
      ],
    },
  } as KubernetesObject;
}

interface WorkerHealth {
  view?: { version: number };
  dataPlane: { version?: number; workers: { pid: number; version?: number }[] };
}

describe("gateway with several workers", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let backends: CountingBackend[];
  let gateway: RunningGateway;
  const health = async () => (await gateway.health()) as unknown as WorkerHealth;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-workers");
    await ensureIngressClass(cluster.kc);
    backends = [await countingBackend("blue"), await countingBackend("green")];
    await applyOrThrow(cluster.kc, [
      ...backends.map(b => endpointSlice(ns, b.name, b.port)),
      roundIngress(ns, 0, "blue"),
    ]);
    gateway = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      env: { BULWARK_WORKERS: String(WORKERS) },
    });
  });

  after(async () => {
    await gateway?.stop();
    for (const backend of backends ?? []) {
      backend.server.closeAllConnections();
      backend.server.close();
    }
    await removeNamespace?.();
  });

  it("runs the configured number of workers on one version", async () => {
    await waitServed(gateway.httpPort, "stable.example.com", "blue");
    const reported = await health();
    assert.equal(reported.dataPlane.workers.length, WORKERS);
    const pids = new Set(reported.dataPlane.workers.map(w => w.pid));
    assert.equal(pids.size, WORKERS);
    assert.ok(!pids.has(gateway.process.pid ?? -1), "workers are processes of their own");
    for (const worker of reported.dataPlane.workers)
      assert.equal(worker.version, reported.view?.version);
  });

  it("switches every worker to each new snapshot before reporting its version", async () => {
    for (let round = 1; round <= CHANGES; round++) {
      const before = (await health()).view?.version ?? 0;
      const backend = backends[round % 2]!;
      // One object written: exactly one new view, whose version /healthz reports once served.
      await applyOrThrow(cluster.kc, [roundIngress(ns, round, backend.name)]);
      const reported = await waitUntil(
        `view ${before + 1} to be reported`,
        async () => {
          const now = await health();
          return (now.view?.version ?? 0) > before ? now : undefined;
        },
        30_000,
        20,
      );
      assert.equal(reported.view?.version, before + 1, `round ${round}: one write, one view`);
      assert.equal(reported.dataPlane.version, reported.view?.version);
      for (const worker of reported.dataPlane.workers)
        assert.equal(
          worker.version,
          reported.view?.version,
          `round ${round}: worker ${worker.pid}`,
        );

      backend.sockets.clear();
      const answers: string[] = [];
      for (let i = 0; i < FRESH_CONNECTIONS; i++) {
        const host = i % 2 === 0 ? "stable.example.com" : `round-${round}.example.com`;
        answers.push(await freshGet(gateway.httpPort, host, `/r${round}`));
      }
      const stale = answers.filter(a => a !== `200 ${backend.name} /r${round}`);
      assert.deepEqual(stale, [], `round ${round}: answers from an old snapshot`);
      // Each worker keeps its own upstream connection: two or more means both workers answered.
      assert.ok(
        backend.sockets.size >= WORKERS,
        `round ${round}: ${backend.sockets.size} upstream connection(s)`,
      );
      const previousHost = await freshGet(gateway.httpPort, `round-${round - 1}.example.com`, "/");
      assert.match(previousHost, /^404 /, `round ${round}: the previous round's host is gone`);
    }
  });

  it("replaces a killed worker with one that serves the latest view, then follows every change", async () => {
    const before = await health();
    const victim = before.dataPlane.workers[0]!.pid;
    process.kill(victim, "SIGKILL");
    const replaced = await waitUntil(
      "a new worker serving the current version",
      async () => {
        const now = await health();
        const pids = now.dataPlane.workers.map(w => w.pid);
        const fresh = pids.length === WORKERS && !pids.includes(victim);
        return fresh && now.dataPlane.version === now.view?.version ? now : undefined;
      },
      30_000,
      50,
    );
    assert.equal(replaced.view?.version, before.view?.version, "no new view was needed");
    // The next change reaches the new worker as a change to the view it was given whole.
    const round = CHANGES + 1;
    const backend = backends[round % 2]!;
    await applyOrThrow(cluster.kc, [roundIngress(ns, round, backend.name)]);
    await waitUntil(
      `every worker at view ${(before.view?.version ?? 0) + 1}`,
      async () => {
        const now = await health();
        const target = (before.view?.version ?? 0) + 1;
        return now.dataPlane.workers.every(w => w.version === target) ? true : undefined;
      },
      30_000,
      20,
    );
    const answers: string[] = [];
    for (let i = 0; i < FRESH_CONNECTIONS; i++) {
      answers.push(await freshGet(gateway.httpPort, `round-${round}.example.com`, "/new"));
    }
    assert.deepEqual(
      answers.filter(a => a !== `200 ${backend.name} /new`),
      [],
      "every worker, the new one included, serves the change",
    );
  });
});
