// The API server calls the built Pepr module's webhook for real, and the stored object carries
// the mutation.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Agent, get } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import { AdmissionregistrationV1Api } from "@kubernetes/client-node";
import { createPermissionGroup, testCluster, testNamespace } from "../harness/cluster";

const cluster = testCluster();

function pod(name: string, annotations?: Record<string, string>) {
  return {
    metadata: { name, annotations },
    spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
  };
}

describe("the Pepr module behind the real API server", () => {
  let ns: string;
  let dropNamespace: () => Promise<void>;
  before(async () => {
    [ns, dropNamespace] = await testNamespace(cluster, "pepr");
    // The group a pod names must exist (pod-permission's admission checks it).
    await createPermissionGroup(cluster, ns, "db-readers");
  });
  after(async () => dropNamespace());

  it("keeps an idle connection open past Node's 5 s, so the API server closes it first (no reset race)", async () => {
    // Only the socket's life is under test here, not the certificate.
    const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const healthz = () =>
      new Promise<boolean>((resolve, reject) => {
        const req = get(`${cluster.peprUrl}/healthz`, { agent }, res => {
          res.resume();
          res.on("end", () => resolve(req.reusedSocket));
        });
        req.on("error", reject);
      });
    try {
      assert.equal(await healthz(), false);
      await sleep(6_000);
      assert.equal(await healthz(), true, "the module's server closed the idle connection");
    } finally {
      agent.destroy();
    }
  });

  it("is registered as a mutating webhook that calls a loopback URL with our CA", async () => {
    const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
    const mutating = await admission.readMutatingWebhookConfiguration({ name: "pepr-bulwark" });
    const hook = mutating.webhooks?.[0];
    assert.match(
      hook?.clientConfig.url ?? "",
      /^https:\/\/127\.0\.0\.1:\d+\/mutate\/[0-9a-f]{64}$/,
    );
    assert.ok(hook?.clientConfig.caBundle, "caBundle is set");
    assert.equal(hook?.failurePolicy, "Fail");
    assert.ok(
      hook?.rules?.some(r => r.resources?.includes("pods") && r.operations?.includes("CREATE")),
    );
  });

  it("injects into a pod that names a permission group, in the stored object", async () => {
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("with-group", { "permission.bulwark.dev/group": "db-readers" }),
    });
    const stored = await cluster.core.readNamespacedPod({ name: "with-group", namespace: ns });
    assert.equal(stored.metadata?.annotations?.["permission.bulwark.dev/status"], "pending");
    assert.equal(stored.spec?.initContainers?.[0]?.name, "bulwark-init");
    // Pepr's own receipt that the pod-permission capability mutated this object.
    assert.equal(stored.metadata?.annotations?.["bulwark.pepr.dev/pod-permission"], "succeeded");
  });

  it("leaves a pod without the group annotation untouched", async () => {
    await cluster.core.createNamespacedPod({ namespace: ns, body: pod("plain") });
    const stored = await cluster.core.readNamespacedPod({ name: "plain", namespace: ns });
    assert.equal(stored.metadata?.annotations?.["permission.bulwark.dev/status"], undefined);
    assert.equal(stored.metadata?.annotations?.["bulwark.pepr.dev/pod-permission"], undefined);
  });
});
