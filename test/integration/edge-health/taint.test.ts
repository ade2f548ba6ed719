// Edge health with the real node-lifecycle controller: nodes whose Lease the test stops renewing
// go Unknown and get tainted; a voted-healthy one must never keep the NoExecute taint.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AdmissionregistrationV1Api,
  type KubernetesObject,
  type V1Node,
} from "@kubernetes/client-node";
import { applyObjects } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { fakeNodes, seenReady, vote, type FakeNodes } from "../../harness/nodes";
import { testCluster } from "../../harness/cluster";

const cluster = testCluster();
const NO_EXECUTE = "node.kubernetes.io/unreachable:NoExecute";

function taints(node: V1Node): string[] {
  return (node.spec?.taints ?? []).map(t => `${t.key}:${t.effect}`);
}

function ready(node: V1Node): string | undefined {
  return node.status?.conditions?.find(c => c.type === "Ready")?.status;
}

async function read(name: string): Promise<V1Node> {
  return cluster.core.readNode({ name });
}

describe("edge health: the unreachable NoExecute taint", () => {
  let nodes: FakeNodes;
  const run = Math.random().toString(16).slice(2, 6);
  const name = (role: string): string => `edge-${role}-${run}`;
  // Each node in its own topology zone: a fully cut-off zone is tainted at the normal rate, and
  // the keeper stays up because the controller stops tainting when every zone is down.
  const zone = (role: string): Record<string, string> => ({
    "topology.kubernetes.io/zone": `zone-${role}-${run}`,
    "superedgehealth/topology-zone": `edge-${run}`,
  });

  before(async () => {
    nodes = fakeNodes(cluster.kc);
    await nodes.add(name("keeper"), zone("keeper"));
    await nodes.add(name("healthy"), zone("healthy"), vote("true"));
    await nodes.add(name("unhealthy"), zone("unhealthy"), vote("false"));
    await nodes.add(name("limited"), zone("limited"), {
      ...vote("true"),
      "edge.bulwark.dev/max-unknown-seconds": "4",
    });
    const cut = ["healthy", "unhealthy", "limited"];
    await seenReady(cluster.core, cut.map(name));
    for (const role of cut) nodes.cutOff(name(role));
  });
  after(async () => nodes.close());

  it("taints a node voted unhealthy as Kubernetes would", async () => {
    const node = await waitUntil(
      "the NoExecute taint",
      async () => {
        const n = await read(name("unhealthy"));
        return taints(n).includes(NO_EXECUTE) ? n : undefined;
      },
      60_000,
      500,
    );
    assert.equal(ready(node), "Unknown");
  });

  it("never lets a voted-healthy Unknown node keep the NoExecute taint, while NoSchedule stays", async () => {
    await waitUntil(
      "the node to be Unknown and NoSchedule-tainted",
      async () => {
        const n = await read(name("healthy"));
        return (
          ready(n) === "Unknown" && taints(n).includes("node.kubernetes.io/unreachable:NoSchedule")
        );
      },
      60_000,
      500,
    );
    // The controller retries the taint every monitor period; watch it for a while.
    for (let i = 0; i < 16; i++) {
      assert.ok(
        !taints(await read(name("healthy"))).includes(NO_EXECUTE),
        `sample ${i}: no NoExecute taint`,
      );
      await new Promise(r => setTimeout(r, 500)); // kept: that it never lands is seen over time
    }
  });

  it("lets the taint land once a voted-healthy node has been Unknown past its autonomy limit", async () => {
    const node = await waitUntil(
      "the NoExecute taint after the limit",
      async () => {
        const n = await read(name("limited"));
        return taints(n).includes(NO_EXECUTE) ? n : undefined;
      },
      60_000,
      500,
    );
    const unknownSince = Date.parse(
      String(node.status?.conditions?.find(c => c.type === "Ready")?.lastTransitionTime),
    );
    assert.ok(Date.now() - unknownSince >= 4000, "not before the 4 s limit");
  });

  it("removes the taint by reconciling when the webhook was not there to strip it", async () => {
    const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
    const config = await admission.readMutatingWebhookConfiguration({ name: "pepr-bulwark" });
    const failOpen = config.webhooks?.find(w => w.name.includes("-fail-open."));
    if (!failOpen) assert.fail("a fail-open webhook exists");
    assert.ok(
      failOpen.rules?.some(r => r.resources?.includes("nodes")),
      "node rules fail open",
    );
    // Applied by the harness's own field manager, so manifests/ still applies cleanly afterwards.
    const apply = async (webhooks: unknown[]): Promise<void> => {
      const object = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: "pepr-bulwark" },
        webhooks,
      };
      assert.deepEqual(await applyObjects(cluster.kc, [object as KubernetesObject]), []);
    };
    const all = config.webhooks ?? [];
    // The webhook is "down": the API server skips it, as failurePolicy Ignore does on errors.
    await apply(all.filter(w => w !== failOpen));
    try {
      await nodes.add(name("orphan"), zone("orphan"), vote("true"));
      await seenReady(cluster.core, [name("orphan")]);
      nodes.cutOff(name("orphan"));
      await waitUntil(
        "the node to go Unknown",
        async () => ready(await read(name("orphan"))) === "Unknown",
        60_000,
        500,
      );
      // Whether or not a sample catches the taint in between, it must not stay. The reconciler
      // records its Event after removing the taint (edge-health/taints.ts): wait for the Event,
      // then for the taint to be gone.
      await waitUntil(
        "an EvictionPrevented Event saying the reconciler removed the taint",
        async () => {
          const events = await cluster.core.listEventForAllNamespaces({
            fieldSelector: `involvedObject.name=${name("orphan")}`,
          });
          return events.items.some(e => e.reason === "EvictionPrevented");
        },
        30_000,
        250,
      );
      await waitUntil(
        "the reconciler to remove the taint",
        async () => !taints(await read(name("orphan"))).includes(NO_EXECUTE),
        30_000,
        250,
      );
    } finally {
      await apply(all);
    }
  });
});
