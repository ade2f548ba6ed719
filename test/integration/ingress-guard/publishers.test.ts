// A tenant cannot attest their own Ingress, through the real API server: a namespace admin who
// holds the checksum CRD's rights in their own namespace is refused by the
// ValidatingAdmissionPolicy (capabilities/ingress-guard/publisher-policy.ts), and an object made
// behind the policy's back (binding removed) is ignored by the guard with an Event.
// The policy is cluster-wide: it is removed again when this file ends, since other tests create
// checksum objects in their own namespaces for gateways told to trust them.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:https";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow, waitUntil } from "../../../hack/control-plane/kube";
import {
  publisherPolicyObjects,
  PUBLISHER_POLICY,
} from "../../../capabilities/ingress-guard/publisher-policy";
import { testCluster, testNamespace } from "../../harness/cluster";

const cluster = testCluster();
const TENANT = "tenant-admin@example.com";

/** One API call as `user` (Impersonate-User), returning the status and the body. */
async function asUser(
  user: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const options: { method: string; headers: Record<string, string> } = {
    method,
    headers: { "Impersonate-User": user, "content-type": "application/json" },
  };
  await cluster.kc.applyToHTTPSOptions(options as never);
  return new Promise((resolve, reject) => {
    const req = request(`${cluster.server}${path}`, options, res => {
      let text = "";
      res.on("data", chunk => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

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
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "checksum-writer", namespace: ns },
        rules: [
          {
            apiGroups: ["tengine.taobao.org"],
            resources: ["ingresschecksums"],
            verbs: ["get", "list", "create", "update", "delete"],
          },
        ],
      } as KubernetesObject,
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "checksum-writer", namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "checksum-writer" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: TENANT }],
      } as KubernetesObject,
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
      const reply = await asUser(TENANT, "POST", path(), checksumObject("self-attested-1"));
      if (reply.status === 201) {
        await asUser(TENANT, "DELETE", `${path()}/self-attested-1`);
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
      const reply = await asUser(TENANT, "POST", path(), checksumObject("self-attested-2"));
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
