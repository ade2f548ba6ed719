// Each workload's ServiceAccount, with the generated RBAC applied for real, asked of the real API
// server's RBAC authorizer (SubjectAccessReview): every call its code makes is allowed, and a few
// it must never make are denied. The tables are written from the workloads' code, not from the
// generator, so a rule dropped or widened by mistake fails here.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AuthorizationV1Api,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { applyObjects } from "../../../hack/control-plane/kube";
import { defaultValues, workloadManifests } from "../../../packaging/manifests";
import { testCluster } from "../../harness/cluster";

const cluster = testCluster();
const authz = cluster.kc.makeApiClient(AuthorizationV1Api);
const NS = "bulwark-system";
const RBAC_KINDS = new Set([
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
]);

/** [verb, group, resource(/subresource), namespace ("" = all or cluster-scoped), object name] */
type Check = [verb: string, group: string, resource: string, namespace: string, name?: string];

const ALLOWED: Record<string, Check[]> = {
  // gateway/source/resources.ts: list + watch per kind, cluster-wide.
  "bulwark-gateway": [
    ["list", "networking.k8s.io", "ingresses", ""],
    ["watch", "networking.k8s.io", "ingresses", ""],
    ["list", "networking.k8s.io", "ingressclasses", ""],
    ["watch", "networking.k8s.io", "ingressclasses", ""],
    ["list", "", "secrets", ""],
    ["watch", "", "secrets", ""],
    ["list", "", "services", ""],
    ["watch", "", "services", ""],
    ["list", "discovery.k8s.io", "endpointslices", ""],
    ["watch", "discovery.k8s.io", "endpointslices", ""],
    ["list", "tengine.taobao.org", "ingresschecksums", ""],
    ["watch", "tengine.taobao.org", "ingresschecksums", ""],
    ["list", "tengine.taobao.org", "secretchecksums", "shop"],
    ["watch", "tengine.taobao.org", "secretchecksums", "shop"],
    // The trusted signing keys: one ConfigMap, by field selector on its name.
    ["list", "", "configmaps", NS, "bulwark-checksum-keys"],
    ["watch", "", "configmaps", NS, "bulwark-checksum-keys"],
  ],
  "bulwark-permission-server": [
    ["create", "authentication.k8s.io", "tokenreviews", ""], // http/auth.ts
    ["create", "authorization.k8s.io", "subjectaccessreviews", ""], // http/auth.ts authorizePodPatcher
    ["list", "", "pods", ""], // pods/cache.ts informer, grants/revoker.ts, prune
    ["watch", "", "pods", ""],
    ["get", "", "pods", "shop"], // pods/cache.ts readNamespacedPod
    ["patch", "", "pods", "shop"], // kube.ts patchPodAnnotations
    ["get", "bulwark.dev", "permissiongroups", "shop"], // providers/catalog.ts
    ["get", "bulwark.dev", "permissionproviders", ""], // providers/catalog.ts
    ["get", "", "namespaces", ""], // providers/catalog.ts: a group's namespace's labels
    ["get", "", "secrets", "vault"], // providers/catalog.ts credentialsSecretRef
    ["create", "", "events", "shop"], // pods/events.ts
    ["get", "", "configmaps", NS], // kube/breaker-store.ts
    ["create", "", "configmaps", NS],
    ["update", "", "configmaps", NS],
    ["create", "bulwark.dev", "permissiongrants", NS], // grants/ledger.ts
    ["update", "bulwark.dev", "permissiongrants", NS],
    ["delete", "bulwark.dev", "permissiongrants", NS],
    ["list", "bulwark.dev", "permissiongrants", NS],
  ],
  "bulwark-edge-health": [
    ["list", "", "nodes", ""], // kube.ts ListWatch of nodes
    ["watch", "", "nodes", ""],
    ["get", "", "nodes", ""],
    ["patch", "", "nodes", ""], // the vote annotation
    ["get", "", "nodes/healthz", ""], // the kubelet check, as the kubelet authorizes it
    ["list", "", "configmaps", "kube-system"], // the zone ConfigMap, by field selector
    ["watch", "", "configmaps", "kube-system"],
  ],
};

const DENIED: Record<string, Check[]> = {
  "bulwark-gateway": [
    ["*", "*", "*", ""],
    ["get", "", "secrets", "shop"],
    ["create", "networking.k8s.io", "ingresses", "shop"],
    ["update", "networking.k8s.io", "ingresses/status", "shop"],
    ["delete", "", "secrets", "shop"],
    ["create", "", "pods", "shop"],
    ["create", "rbac.authorization.k8s.io", "clusterrolebindings", ""],
    ["list", "", "configmaps", NS],
    ["get", "", "configmaps", NS, "bulwark-permission-breakers"],
    ["update", "", "configmaps", NS, "bulwark-checksum-keys"],
  ],
  "bulwark-permission-server": [
    ["*", "*", "*", ""],
    ["list", "", "secrets", ""],
    ["watch", "", "secrets", "vault"],
    ["create", "", "pods", "shop"],
    ["delete", "", "pods", "shop"],
    ["create", "", "pods/exec", "shop"],
    ["create", "", "configmaps", "shop"],
    ["update", "bulwark.dev", "permissiongroups", "shop"],
    ["create", "bulwark.dev", "permissiongrants", "shop"], // the ledger lives in its namespace only
    ["patch", "", "nodes", ""],
  ],
  "bulwark-edge-health": [
    ["*", "*", "*", ""],
    ["get", "", "secrets", NS],
    ["get", "", "nodes/proxy", ""],
    ["delete", "", "nodes", ""],
    ["update", "", "configmaps", "kube-system"],
    ["get", "", "configmaps", NS],
    ["list", "", "pods", ""],
    ["create", "", "events", "default"],
  ],
};

async function allowed(
  account: string,
  [verb, group, resource, namespace, name]: Check,
): Promise<boolean> {
  const [plain, subresource] = resource.split("/");
  const attributes: V1ResourceAttributes = { verb, group, resource: plain, namespace, name };
  if (subresource) attributes.subresource = subresource;
  const review = await authz.createSubjectAccessReview({
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${NS}:${account}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"],
        resourceAttributes: attributes,
      },
    },
  });
  return review.status?.allowed === true;
}

describe("RBAC per workload, asked of the real authorizer", () => {
  const objects = workloadManifests(defaultValues());
  const rbac = objects.filter(o => RBAC_KINDS.has(o.kind ?? ""));

  before(async () => {
    const namespaces = objects.filter(o => o.kind === "Namespace");
    assert.deepEqual(await applyObjects(cluster.kc, [...namespaces, ...rbac]), []);
  });

  after(async () => {
    // The grants go; the namespaces stay (other tests apply manifests/ into them).
    const client = KubernetesObjectApi.makeApiClient(cluster.kc);
    for (const object of [...rbac].reverse() as KubernetesObject[]) await client.delete(object);
  });

  for (const account of Object.keys(ALLOWED)) {
    it(`${account}: every call its code makes is allowed`, async () => {
      const refused: string[] = [];
      for (const check of ALLOWED[account] ?? []) {
        if (!(await allowed(account, check))) refused.push(check.join(" "));
      }
      assert.deepEqual(refused, []);
    });

    it(`${account}: what it must not do is denied`, async () => {
      const granted: string[] = [];
      for (const check of DENIED[account] ?? []) {
        if (await allowed(account, check)) granted.push(check.join(" "));
      }
      assert.deepEqual(granted, []);
    });
  }

  it("a ServiceAccount of another workload gets none of it (the bindings name their own account)", async () => {
    assert.equal(await allowed("default", ["list", "", "nodes", ""]), false);
    assert.equal(await allowed("bulwark-gateway", ["patch", "", "nodes", ""]), false);
    assert.equal(await allowed("bulwark-edge-health", ["list", "", "secrets", ""]), false);
  });
});
