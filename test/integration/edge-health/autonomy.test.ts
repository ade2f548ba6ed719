// Votes with a term, autonomy users can see and choose, and endpoint repairs that converge, with
// the real node-lifecycle and endpoint controllers: a vote nobody refreshes stops protecting its
// node; a hand-written "true" never protects; a node that opts out is evicted as Kubernetes
// would; a node voted healthy after its pods went not ready gets them back by the resync, and
// gives them back when its vote runs out.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import { fakeNodes, runningPod, seenReady, vote, type FakeNodes } from "../../harness/nodes";
import { testCluster, testNamespace } from "../../harness/cluster";

const cluster = testCluster();
const discovery = cluster.kc.makeApiClient(DiscoveryV1Api);
const NO_EXECUTE = "node.kubernetes.io/unreachable:NoExecute";

const taints = (node: V1Node): string[] =>
  (node.spec?.taints ?? []).map(t => `${t.key}:${t.effect}`);
const autonomy = (node: V1Node) => node.status?.conditions?.find(c => c.type === "EdgeAutonomy");
const read = (name: string): Promise<V1Node> => cluster.core.readNode({ name });

async function eventReasons(node: string): Promise<string[]> {
  const events = await cluster.core.listNamespacedEvent({
    namespace: "default",
    fieldSelector: `involvedObject.name=${node}`,
  });
  return events.items.map(e => e.reason ?? "");
}

describe("edge health: votes with a term, autonomy, converging endpoints", () => {
  let nodes: FakeNodes;
  const run = Math.random().toString(16).slice(2, 6);
  const name = (role: string): string => `edge-${role}-${run}`;
  const zone = (role: string): Record<string, string> => ({
    "topology.kubernetes.io/zone": `zone-${role}-${run}`,
  });
  const TERM_MS = 30_000;
  let staleUntil = 0;

  before(async () => {
    nodes = fakeNodes(cluster.kc);
    await nodes.add(name("keeper"), zone("keeper"));
    const term = vote("true", TERM_MS);
    staleUntil = Date.parse(term["edge.bulwark.dev/vote-valid-until"] ?? "");
    await nodes.add(name("stale"), zone("stale"), term);
    await nodes.add(name("byhand"), zone("byhand"), { "superedgehealth/node-health": "true" });
    await nodes.add(name("optout"), zone("optout"), {
      ...vote("true"),
      "edge.bulwark.dev/autonomy": "false",
    });
    const cut = ["stale", "byhand", "optout"];
    await seenReady(cluster.core, cut.map(name));
    for (const role of cut) nodes.cutOff(name(role));
  });
  after(async () => nodes.close());

  it("protects a node while its vote's term runs, then lets the taint land and says why", async () => {
    const protectedNode = await waitUntil(
      "EdgeAutonomy True (Voted)",
      async () => {
        const n = await read(name("stale"));
        return autonomy(n)?.status === "True" ? n : undefined;
      },
      60_000,
      500,
    );
    assert.equal(autonomy(protectedNode)?.reason, "Voted");
    assert.ok(!taints(protectedNode).includes(NO_EXECUTE));
    const evicted = await waitUntil(
      "the NoExecute taint after the term",
      async () => {
        const n = await read(name("stale"));
        return taints(n).includes(NO_EXECUTE) ? n : undefined;
      },
      90_000,
      500,
    );
    assert.ok(Date.now() >= staleUntil, "not before the term ended");
    const condition = await waitUntil(
      "EdgeAutonomy False (Stale)",
      async () => {
        const c = autonomy(await read(name("stale")));
        return c?.status === "False" ? c : undefined;
      },
      30_000,
      500,
    );
    assert.equal(condition.reason, "Stale");
    assert.match(condition.message ?? "", /expired at/);
    assert.ok(taints(evicted).includes(NO_EXECUTE));
    const reasons = await eventReasons(name("stale"));
    assert.ok(reasons.includes("EdgeAutonomyStarted"), reasons.join(","));
    assert.ok(reasons.includes("EdgeAutonomyEnded"), reasons.join(","));
  });

  it('never protects a "true" written by hand, without a term', async () => {
    const node = await waitUntil(
      "the NoExecute taint",
      async () => {
        const n = await read(name("byhand"));
        return taints(n).includes(NO_EXECUTE) && autonomy(n) ? n : undefined;
      },
      60_000,
      500,
    );
    assert.deepEqual([autonomy(node)?.status, autonomy(node)?.reason], ["False", "Stale"]);
    assert.match(autonomy(node)?.message ?? "", /vote-decided-at"\] is missing/);
  });

  it('evicts a node whose autonomy annotation says "false", voted healthy or not', async () => {
    const node = await waitUntil(
      "the NoExecute taint",
      async () => {
        const n = await read(name("optout"));
        return taints(n).includes(NO_EXECUTE) && autonomy(n) ? n : undefined;
      },
      60_000,
      500,
    );
    assert.deepEqual([autonomy(node)?.status, autonomy(node)?.reason], ["False", "OptedOut"]);
  });
});

describe("edge health: endpoint repairs converge", () => {
  let nodes: FakeNodes;
  let ns: string;
  let drop: () => Promise<void>;
  const run = Math.random().toString(16).slice(2, 6);
  const edge = `edge-late-${run}`;
  const IP = "10.244.9.5";

  async function sliceReady(): Promise<{ ready?: boolean; kept?: string }> {
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace: ns,
      labelSelector: "kubernetes.io/service-name=late",
    });
    for (const slice of slices.items) {
      const endpoint = slice.endpoints.find(e => e.addresses.includes(IP));
      if (endpoint) {
        return {
          ready: endpoint.conditions?.ready,
          kept: slice.metadata?.annotations?.["edge.bulwark.dev/kept-ready"],
        };
      }
    }
    return {};
  }
  const endpointsReady = async (): Promise<boolean> => {
    const endpoints = await cluster.core.readNamespacedEndpoints({ name: "late", namespace: ns });
    return (endpoints.subsets ?? []).some(s => (s.addresses ?? []).some(a => a.ip === IP));
  };

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "edge-late");
    nodes = fakeNodes(cluster.kc);
    await nodes.add(`edge-late-keeper-${run}`, { "topology.kubernetes.io/zone": `zk-${run}` });
    await nodes.add(edge, { "topology.kubernetes.io/zone": `zl-${run}` });
    await cluster.core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: "late" },
        spec: { selector: { app: "late" }, ports: [{ port: 80, targetPort: 80 }] },
      },
    });
    await runningPod(cluster.core, {
      namespace: ns,
      name: "web",
      node: edge,
      ip: IP,
      labels: { app: "late" },
      ready: true,
    });
    await waitUntil(
      "the slice to list the pod ready",
      async () => (await sliceReady()).ready === true,
      30_000,
      250,
    );
  });

  after(async () => {
    await cluster.core
      .deleteNamespacedPod({ name: "web", namespace: ns, gracePeriodSeconds: 0 })
      .catch(() => {});
    await nodes.close();
    await drop();
  });

  it("gives a node voted healthy after its pods went not ready its endpoints back by the resync, and takes them away when the vote runs out", async () => {
    nodes.cutOff(edge);
    await waitUntil(
      "the controllers to mark the pod not ready everywhere",
      async () => (await sliceReady()).ready === false && !(await endpointsReady()),
      60_000,
      500,
    );
    // The vote arrives only now: no endpoint write follows, only the resync can repair.
    const term = vote("true", 40_000);
    await cluster.core.patchNode(
      { name: edge, body: { metadata: { annotations: term } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const kept = await waitUntil(
      "the resync to keep the pod ready",
      async () => {
        const state = await sliceReady();
        return state.ready === true && (await endpointsReady()) ? state : undefined;
      },
      25_000,
      500,
    );
    assert.ok(kept.kept, "the slice records what Bulwark keeps");
    const until = Date.parse(term["edge.bulwark.dev/vote-valid-until"] ?? "");
    await waitUntil(
      "the pod to go back to not ready after the term",
      async () => (await sliceReady()).ready === false && !(await endpointsReady()),
      until - Date.now() + 30_000,
      500,
    );
    assert.ok(Date.now() >= until, "not before the term ended");
    assert.equal((await sliceReady()).kept, undefined, "the record is gone");
  });
});
