// The harness is real: version, TokenRequest/TokenReview, finalizers, the controller manager.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { AuthenticationV1Api, VersionApi, type V1ConfigMap } from "@kubernetes/client-node";
import { waitUntil } from "../harness/wait";
import { testCluster, testNamespace } from "../harness/cluster";
import { isNotFound } from "../../kube/api-errors";
import { readyNode } from "../../hack/local-stack/node-status";

const cluster = testCluster();

describe("the test control plane", () => {
  let ns: string;
  let dropNamespace: () => Promise<void>;
  before(async () => ([ns, dropNamespace] = await testNamespace(cluster, "harness")));
  after(async () => dropNamespace());

  it("reports the Kubernetes version it was built from", async () => {
    const version = await cluster.kc.makeApiClient(VersionApi).getCode();
    assert.equal(version.gitVersion, "v1.35.4");
    assert.equal(version.major, "1");
    assert.equal(version.minor, "35");
  });

  it("issues pod-bound service-account tokens that TokenReview accepts only for their audience", async () => {
    await cluster.core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: "client" } },
    });
    const pod = await cluster.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "client" },
        spec: {
          serviceAccountName: "client",
          containers: [{ name: "app", image: "registry.example/app:1" }],
        },
      },
    });
    const token = await cluster.core.createNamespacedServiceAccountToken({
      name: "client",
      namespace: ns,
      body: {
        spec: {
          audiences: ["bulwark-permission-server"],
          expirationSeconds: 600,
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: "client", uid: pod.metadata!.uid },
        },
      },
    });
    const auth = cluster.kc.makeApiClient(AuthenticationV1Api);
    const review = await auth.createTokenReview({
      body: { spec: { token: token.status!.token, audiences: ["bulwark-permission-server"] } },
    });
    assert.equal(review.status?.authenticated, true);
    assert.equal(review.status?.user?.username, `system:serviceaccount:${ns}:client`);
    assert.deepEqual(review.status?.user?.extra?.["authentication.kubernetes.io/pod-name"], [
      "client",
    ]);
    assert.deepEqual(review.status?.user?.extra?.["authentication.kubernetes.io/pod-uid"], [
      pod.metadata!.uid,
    ]);

    const wrongAudience = await auth.createTokenReview({
      body: { spec: { token: token.status!.token, audiences: ["someone-else"] } },
    });
    assert.notEqual(wrongAudience.status?.authenticated, true);
    assert.match(wrongAudience.status?.error ?? "", /audience/);
  });

  it("holds a deletion while a finalizer remains, and completes it when the finalizer goes", async () => {
    const name = "held";
    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name, finalizers: ["bulwark.dev/test-hold"] }, data: { a: "1" } },
    });
    await cluster.core.deleteNamespacedConfigMap({ name, namespace: ns });
    const held: V1ConfigMap = await cluster.core.readNamespacedConfigMap({ name, namespace: ns });
    assert.ok(held.metadata?.deletionTimestamp, "a deletionTimestamp is set");
    assert.deepEqual(held.metadata?.finalizers, ["bulwark.dev/test-hold"]);

    await cluster.core.replaceNamespacedConfigMap({
      name,
      namespace: ns,
      body: { ...held, metadata: { ...held.metadata, finalizers: [] } },
    });
    await waitUntil("the ConfigMap to be gone", async () => {
      try {
        await cluster.core.readNamespacedConfigMap({ name, namespace: ns });
        return false;
      } catch (error) {
        return isNotFound(error);
      }
    });
  });

  it("runs the controller manager: namespaces are emptied and deleted, default ServiceAccounts appear", async () => {
    const [other, drop] = await testNamespace(cluster, "harness-gc");
    await waitUntil(
      "the default ServiceAccount",
      async () => cluster.core.readNamespacedServiceAccount({ name: "default", namespace: other }),
      30_000,
    );
    await cluster.core.createNamespacedConfigMap({
      namespace: other,
      body: { metadata: { name: "x" } },
    });
    await drop();
    await waitUntil(
      "the namespace to be deleted",
      async () => {
        try {
          await cluster.core.readNamespace({ name: other });
          return false;
        } catch (error) {
          return isNotFound(error);
        }
      },
      60_000,
    );
  });

  it("keeps a Node's status on create: the local stack's nodes are Ready from their first write", async () => {
    // Created bare and patched after, a node has no Ready condition for a moment; a controller
    // manager looking then enters master-disruption mode (seen in a local-stack run).
    const name = `ready-on-create-${Date.now()}`;
    const node = { name, address: "127.0.0.9", labels: {} };
    await cluster.core.createNode({ body: readyNode(node, new Date()) });
    try {
      const stored = await cluster.core.readNode({ name });
      const ready = stored.status?.conditions?.find(c => c.type === "Ready");
      assert.equal(ready?.status, "True");
      const address = stored.status?.addresses?.[0];
      assert.deepEqual([address?.type, address?.address], ["InternalIP", "127.0.0.9"]);
    } finally {
      await cluster.core.deleteNode({ name });
    }
  });
});
