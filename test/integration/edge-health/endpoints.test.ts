// Endpoints and EndpointSlices of a voted-healthy node cut off from the cloud: the node-lifecycle
// controller marks its pods not ready and the endpoint controllers follow; Bulwark keeps the pods
// that were ready in service, and never promotes one that was not.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DiscoveryV1Api } from "@kubernetes/client-node";
import { KeptAliveApi } from "../../../kube/kept-alive-api";
import { waitUntil } from "../../harness/wait";
import { fakeNodes, runningPod, vote, type FakeNodes } from "../../harness/nodes";
import { testCluster, testNamespace } from "../../harness/cluster";

const cluster = testCluster();
const discovery = cluster.kc.makeApiClient(DiscoveryV1Api);

describe("edge health: endpoints of a voted-healthy Unknown node", () => {
  let nodes: FakeNodes;
  let ns: string;
  let drop: () => Promise<void>;
  const run = Math.random().toString(16).slice(2, 6);
  const edge = `edge-ep-${run}`;

  const podOn = (name: string, ip: string, ready: boolean) =>
    runningPod(cluster.core, {
      namespace: ns,
      name,
      node: edge,
      ip,
      labels: { app: "web" },
      ready,
    });

  async function endpointState() {
    const endpoints = await cluster.core.readNamespacedEndpoints({ name: "web", namespace: ns });
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace: ns,
      labelSelector: "kubernetes.io/service-name=web",
    });
    return {
      ready: (endpoints.subsets ?? []).flatMap(s => s.addresses ?? []).map(a => a.ip),
      notReady: (endpoints.subsets ?? []).flatMap(s => s.notReadyAddresses ?? []).map(a => a.ip),
      sliceReady: Object.fromEntries(
        slices.items.flatMap(s => s.endpoints).map(e => [e.addresses[0], e.conditions?.ready]),
      ),
    };
  }

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "edge-ep");
    nodes = fakeNodes(cluster.kc);
    await nodes.add(`edge-keeper-${run}`, { "topology.kubernetes.io/zone": `zone-keeper-${run}` });
    await nodes.add(edge, { "topology.kubernetes.io/zone": `zone-ep-${run}` }, vote("true"));
    await cluster.core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 80 }] },
      },
    });
    await podOn("ready", "10.244.7.5", true);
    await podOn("unready", "10.244.7.6", false);
    await waitUntil(
      "the endpoints controllers to list both pods",
      async () => {
        const s = await endpointState();
        return (
          s.ready.includes("10.244.7.5") &&
          s.notReady.includes("10.244.7.6") &&
          s.sliceReady["10.244.7.5"] === true
        );
      },
      30_000,
      250,
    );
  });

  after(async () => {
    for (const name of ["ready", "unready"]) {
      await cluster.core
        .deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 })
        .catch(() => {});
    }
    await nodes.close();
    await drop();
  });

  it("keeps the ready pod in Endpoints and EndpointSlices after the controller marks it not ready", async () => {
    nodes.cutOff(edge);
    await waitUntil(
      "the node-lifecycle controller to mark the pod not ready",
      async () => {
        const pod = await cluster.core.readNamespacedPod({ name: "ready", namespace: ns });
        return pod.status?.conditions?.some(c => c.type === "Ready" && c.status === "False");
      },
      60_000,
      500,
    );
    for (let i = 0; i < 10; i++) {
      const state = await endpointState();
      assert.ok(
        state.ready.includes("10.244.7.5"),
        `sample ${i}: Endpoints keep the ready pod: ${JSON.stringify(state)}`,
      );
      assert.equal(
        state.sliceReady["10.244.7.5"],
        true,
        `sample ${i}: the EndpointSlice keeps it ready`,
      );
      assert.ok(
        state.notReady.includes("10.244.7.6"),
        `sample ${i}: the pod that was never ready stays not ready`,
      );
      assert.equal(state.sliceReady["10.244.7.6"], false);
      // Kept: samples across the controllers' resyncs; that they never win is shown over time.
      await new Promise(r => setTimeout(r, 500));
    }
  });
});

describe("edge health: an EndpointSlice without endpoints", () => {
  let ns: string;
  let drop: () => Promise<void>;
  before(async () => ([ns, drop] = await testNamespace(cluster, "edge-empty")));
  after(() => drop());

  it("is admitted as written: the controller writes a Service with no pods as endpoints null", async () => {
    // Raw JSON: the typed client would send []. The mutation once threw on null, and Pepr
    // answered a thrown action of this fail-open webhook with a refusal.
    const created = await new KeptAliveApi(cluster.kc).post<{ endpoints?: unknown }>(
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: "empty", labels: { "kubernetes.io/service-name": "empty" } },
        addressType: "IPv4",
        endpoints: null,
      },
    );
    assert.equal(created.endpoints ?? null, null);
  });
});
