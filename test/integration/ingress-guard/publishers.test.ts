// A tenant cannot attest their own Ingress, through the real API server: a namespace admin who
// holds the checksum CRD's rights in their own namespace is refused by the
// ValidatingAdmissionPolicy (capabilities/ingress-guard/publisher-policy.ts), and an object made
// behind the policy's back (binding removed) is ignored by the guard with an Event.
// The policy is cluster-wide: it is removed again when this file ends, since other tests create
// checksum objects in their own namespaces for gateways told to trust them.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import {
  publisherPolicyObjects,
  PUBLISHER_POLICY,
} from "../../../capabilities/ingress-guard/publisher-policy";
import { testCluster, testNamespace } from "../../harness/cluster";
import { asUser, userRole } from "../../harness/impersonation";

const cluster = testCluster();
const TENANT = "tenant-admin@example.com";

function checksumObject(name: string) {
  return {
    apiVersion: "tengine.taobao.org/v1",
    kind: "IngressCheckSum",
    metadata: { name },
    spec: { timestamp: new Date().toISOString(), checksum: "a".repeat(64), mode: "content" },
  };
}

describe("who may publish a checksum", () => {
  let ns: string;
  let drop: () => Promise<void>;
  const policy = publisherPolicyObjects(["bulwark-system"]) as KubernetesObject[];
  const objects = KubernetesObjectApi.makeApiClient(cluster.kc);

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "tenant");
    await applyOrThrow(cluster.kc, [
      ...policy,
      // A namespace admin who was granted the CRD in their own namespace.
      ...userRole(ns, "checksum-writer", TENANT, [
        {
          apiGroups: ["tengine.taobao.org"],
          resources: ["ingresschecksums"],
          verbs: ["get", "list", "create", "update", "delete"],
        },
      ]),
    ]);
  });

  after(async () => {
    for (const object of policy) await objects.delete(object).catch(() => undefined);
    await drop?.();
  });

  const path = () => `/apis/tengine.taobao.org/v1/namespaces/${ns}/ingresschecksums`;

  it("refuses the tenant's checksum object in their own namespace, naming the publisher namespaces", async () => {
    // The policy takes a moment to be loaded by the API server.
    const refused = await waitUntil("the policy to refuse", async () => {
      const reply = await asUser(cluster, TENANT, {
        method: "POST",
        path: path(),
        body: checksumObject("self-attested-1"),
      });
      if (reply.status === 201) {
        await asUser(cluster, TENANT, { method: "DELETE", path: `${path()}/self-attested-1` });
        return undefined;
      }
      return reply;
    });
    assert.equal(refused.status, 403, refused.body);
    assert.match(refused.body, /trusted only in the publisher namespaces bulwark-system; not in/);
    assert.match(refused.body, new RegExp(PUBLISHER_POLICY));
  });

  it("ignores, with an Event, one the tenant made while the policy was removed", async () => {
    const binding = policy.find(o => o.kind === "ValidatingAdmissionPolicyBinding")!;
    await objects.delete(binding);
    const created = await waitUntil("the tenant's create to pass without the policy", async () => {
      const reply = await asUser(cluster, TENANT, {
        method: "POST",
        path: path(),
        body: checksumObject("self-attested-2"),
      });
      return reply.status === 201 ? reply : undefined;
    });
    assert.equal(created.status, 201);
    const event = await waitUntil("an UntrustedPublisher Event on it", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: "involvedObject.name=self-attested-2",
      });
      return events.items.find(e => e.reason === "UntrustedPublisher");
    });
    assert.equal(event.type, "Warning");
  });
});
