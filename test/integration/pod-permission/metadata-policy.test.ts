// A tenant who may patch pods in their namespace cannot edit Bulwark's metadata on them, through
// the real API server: the ValidatingAdmissionPolicy (capabilities/pod-permission/
// metadata-policy.ts) refuses changing or removing permission.bulwark.dev/* annotations and
// labels, adding new ones, and removing the finalizer; their own annotations stay theirs. At
// CREATE it admits exactly what Bulwark's mutation leaves (a copied grant record or status is
// stripped by it, so such a pod is still created and injected), and the Pepr module, running as
// its own ServiceAccount as in a cluster, still removes its finalizer.
// Cluster-wide, so it is removed again when this file ends.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import {
  MAX_CHECKED_KEYS,
  METADATA_POLICY,
  metadataPolicyObjects,
  trustedWriters,
} from "../../../capabilities/pod-permission/metadata-policy";
import { createPermissionGroup, testCluster, testNamespace } from "../../harness/cluster";
import { asUser, userRole } from "../../harness/impersonation";
import { isNotFound } from "../../../kube/api-errors";

const cluster = testCluster();
const TENANT = "tenant-a-admin@example.com";
const FINALIZER = "stke.io/podpermission-protection";

/** A JSON merge patch of pod `name` as `user`. */
function patchAs(user: string, namespace: string, name: string, patch: unknown) {
  const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
  const contentType = "application/merge-patch+json";
  return asUser(cluster, user, { method: "PATCH", path, body: patch, contentType });
}

describe("Bulwark's pod metadata: only Bulwark writes it", () => {
  let ns: string;
  let drop: () => Promise<void>;
  const policy = metadataPolicyObjects(trustedWriters("bulwark-system")) as KubernetesObject[];
  const objects = KubernetesObjectApi.makeApiClient(cluster.kc);
  let provider: string;

  /** Creates a pod as the tenant (JSON body as kubectl sends it). */
  function createAs(name: string, metadata: Record<string, unknown>) {
    return asUser(cluster, TENANT, {
      method: "POST",
      path: `/api/v1/namespaces/${ns}/pods`,
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, ...metadata },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      },
    });
  }

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "meta-policy");
    provider = await createPermissionGroup(cluster, ns, "db-readers");
    await applyOrThrow(cluster.kc, [
      ...policy,
      ...userRole(ns, "pod-editor", TENANT, [
        {
          apiGroups: [""],
          resources: ["pods"],
          verbs: ["get", "list", "patch", "update", "create", "delete"],
        },
      ]),
    ]);
    // A pod as Bulwark leaves it once granted (written by the administrator: the harness).
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: "payments-api-0",
          finalizers: [FINALIZER],
          labels: { app: "api" },
          annotations: {
            "permission.bulwark.dev/grant": '{"ip":"10.0.0.50","uid":"u"}',
            "team.example.com/owner": "payments",
          },
        },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      },
    });
  });

  after(async () => {
    for (const object of policy) await objects.delete(object).catch(() => undefined);
    // The finalizer is the administrator's to remove here.
    await cluster.core
      .patchNamespacedPod({
        name: "payments-api-0",
        namespace: ns,
        body: [{ op: "remove", path: "/metadata/finalizers" }],
      })
      .catch(() => undefined);
    await objects
      .delete({
        apiVersion: "bulwark.dev/v1alpha1",
        kind: "PermissionProvider",
        metadata: { name: provider },
      } as KubernetesObject)
      .catch(() => undefined);
    await drop?.();
  });

  const refusals: [string, unknown, RegExp][] = [
    [
      "edits the grant record",
      {
        metadata: {
          annotations: { "permission.bulwark.dev/grant": '{"ip":"10.0.0.99","uid":"u"}' },
        },
      },
      /annotations are written by Bulwark only/,
    ],
    [
      "removes the grant record",
      { metadata: { annotations: { "permission.bulwark.dev/grant": null } } },
      /annotations are written by Bulwark only/,
    ],
    [
      "adds a status",
      { metadata: { annotations: { "permission.bulwark.dev/status": "pending" } } },
      /annotations are written by Bulwark only/,
    ],
    [
      "adds a Bulwark label",
      { metadata: { labels: { "permission.bulwark.dev/managed": "true" } } },
      /labels are written by Bulwark only/,
    ],
    [
      "removes the finalizer",
      { metadata: { finalizers: [] } },
      /finalizer is removed by Bulwark once the pod's grants are revoked/,
    ],
  ];

  it("refuses the tenant each change to Bulwark's metadata, naming the policy", async () => {
    // The policy takes a moment to be loaded by the API server.
    const first = refusals[0]!;
    await waitUntil("the policy to refuse", async () => {
      const reply = await patchAs(TENANT, ns, "payments-api-0", first[1]);
      if (reply.status === 200) {
        await cluster.core.patchNamespacedPod({
          name: "payments-api-0",
          namespace: ns,
          body: [
            {
              op: "replace",
              path: "/metadata/annotations/permission.bulwark.dev~1grant",
              value: '{"ip":"10.0.0.50","uid":"u"}',
            },
          ],
        });
        return undefined;
      }
      return reply.status === 403 ? reply : undefined;
    });
    for (const [what, patch, message] of refusals) {
      const reply = await patchAs(TENANT, ns, "payments-api-0", patch);
      assert.equal(reply.status, 403, `${what}: ${reply.body}`);
      assert.match(reply.body, message, what);
      assert.match(reply.body, new RegExp(METADATA_POLICY), what);
    }
    const pod = await cluster.core.readNamespacedPod({ name: "payments-api-0", namespace: ns });
    assert.equal(
      pod.metadata?.annotations?.["permission.bulwark.dev/grant"],
      '{"ip":"10.0.0.50","uid":"u"}',
    );
    assert.deepEqual(pod.metadata?.finalizers, [FINALIZER]);
  });

  it("lets the tenant change everything else on the pod", async () => {
    const reply = await patchAs(TENANT, ns, "payments-api-0", {
      metadata: { annotations: { "team.example.com/owner": "billing" }, labels: { app: "api-v2" } },
    });
    assert.equal(reply.status, 200, reply.body);
  });

  it("lets a user granted update on bulwark.dev/podpermissionmetadata cluster-wide change it", async () => {
    const operator = "permission-operator@example.com";
    await applyOrThrow(cluster.kc, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: `${ns}-metadata-override` },
        rules: [
          { apiGroups: [""], resources: ["pods"], verbs: ["get", "patch"] },
          { apiGroups: ["bulwark.dev"], resources: ["podpermissionmetadata"], verbs: ["update"] },
        ],
      } as KubernetesObject,
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: `${ns}-metadata-override` },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: `${ns}-metadata-override`,
        },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: operator }],
      } as KubernetesObject,
    ]);
    try {
      const reply = await waitUntil("the operator's RBAC to apply", async () => {
        const r = await patchAs(operator, ns, "payments-api-0", {
          metadata: { annotations: { "permission.bulwark.dev/status": "pending" } },
        });
        return r.status === 200 ? r : undefined;
      });
      assert.equal(reply.status, 200);
    } finally {
      for (const kind of ["ClusterRoleBinding", "ClusterRole"])
        await objects
          .delete({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind,
            metadata: { name: `${ns}-metadata-override` },
          })
          .catch(() => undefined);
    }
  });

  it("lets the cluster administrator change it (bulwark uninstall, bulwark permission reset)", async () => {
    await cluster.core.patchNamespacedPod({
      name: "payments-api-0",
      namespace: ns,
      body: [
        {
          op: "add",
          path: "/metadata/annotations/permission.bulwark.dev~1status",
          value: "pending",
        },
      ],
    });
  });

  it("creates a tenant's pod carrying a copied grant record and status: the mutation strips them, the pod is injected", async () => {
    const reply = await createAs("copied", {
      annotations: {
        "permission.bulwark.dev/group": "db-readers",
        "permission.bulwark.dev/status": '{"phase":"granted","uid":"u","ip":"10.0.0.50"}',
        "permission.bulwark.dev/grant": '{"ip":"10.0.0.50","uid":"u"}',
        "permission.bulwark.dev/claim": '{"holder":"x","until":"2099-01-01T00:00:00Z"}',
      },
      labels: { "permission.bulwark.dev/managed": "true" },
    });
    assert.equal(reply.status, 201, reply.body);
    const pod = await cluster.core.readNamespacedPod({ name: "copied", namespace: ns });
    const bulwark = Object.entries(pod.metadata?.annotations ?? {}).filter(([k]) =>
      k.startsWith("permission.bulwark.dev/"),
    );
    assert.deepEqual(bulwark.sort(), [
      ["permission.bulwark.dev/group", "db-readers"],
      ["permission.bulwark.dev/status", "pending"],
    ]);
    assert.equal(pod.spec?.initContainers?.[0]?.name, "bulwark-init");
    assert.deepEqual(pod.metadata?.finalizers, [FINALIZER]);
  });

  const createRefusals: [string, Record<string, unknown>, RegExp][] = [
    [
      "a status on a pod Bulwark does not inject",
      { annotations: { "permission.bulwark.dev/status": "granted" } },
      /may carry only permission\.bulwark\.dev\/group .*remove: permission\.bulwark\.dev\/status/,
    ],
    [
      "a grant record on a pod Bulwark does not inject",
      { annotations: { "permission.bulwark.dev/grant": '{"ip":"10.0.0.50"}' } },
      /remove: permission\.bulwark\.dev\/grant/,
    ],
    [
      "a Bulwark label with another value",
      { labels: { "permission.bulwark.dev/managed": "false" } },
      /labels are set by Bulwark only.*remove: permission\.bulwark\.dev\/managed/,
    ],
    [
      "a Bulwark label Bulwark never sets",
      { labels: { "permission.bulwark.dev/exempt": "true" } },
      /remove: permission\.bulwark\.dev\/exempt/,
    ],
  ];

  it("refuses a tenant's new pod with Bulwark metadata the mutation did not set, naming the key", async () => {
    for (const [what, metadata, message] of createRefusals) {
      const reply = await createAs("refused", metadata);
      assert.equal(reply.status, 403, `${what}: ${reply.body}`);
      assert.match(reply.body, message, what);
      assert.match(reply.body, new RegExp(METADATA_POLICY), what);
    }
    const plain = await createAs("plain", { labels: { app: "web" } });
    assert.equal(plain.status, 201, plain.body);
  });

  it("lets the mutation's refusal through, so the tenant reads why their pod was refused", async () => {
    const reply = await createAs("no-group", {
      annotations: { "permission.bulwark.dev/group": "nope" },
    });
    assert.equal(reply.status, 422, reply.body);
    assert.match(reply.body, /names PermissionGroup \\"nope\\", which does not exist/);
    assert.doesNotMatch(reply.body, new RegExp(METADATA_POLICY));
  });

  it("refuses a tenant's pod with more labels or annotations than it checks, before iterating them", async () => {
    // The API server's CEL tracks a comprehension's cost in quadratic time: without the bound,
    // 30 000 labels cost it 6.4 s of CPU per write (hack/bench/metadata-policy-cost.ts).
    const labels = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}.example.com/k`, "v"]));
    const many = await createAs("many-labels", { labels: labels(30_000) });
    assert.equal(many.status, 403, many.body.slice(0, 300));
    assert.match(
      many.body,
      new RegExp(
        `metadata\\.labels: 30000 labels; a pod may carry at most ${MAX_CHECKED_KEYS} unless Bulwark or a cluster administrator writes it`,
      ),
    );
    assert.match(many.body, new RegExp(METADATA_POLICY));

    // At the bound every rule still runs: a smuggled key is named.
    const smuggled = await createAs("bounded-smuggled", {
      labels: { ...labels(MAX_CHECKED_KEYS - 1), "permission.bulwark.dev/managed": "false" },
    });
    assert.equal(smuggled.status, 403, smuggled.body.slice(0, 300));
    assert.match(smuggled.body, /remove: permission\.bulwark\.dev\/managed/);
    const atBound = await createAs("bounded", { labels: labels(MAX_CHECKED_KEYS) });
    assert.equal(atBound.status, 201, atBound.body.slice(0, 300));
    const edited = await patchAs(TENANT, ns, "bounded", { metadata: { labels: { l0: "w" } } });
    assert.equal(edited.status, 403, "one more label is over the bound");
    assert.match(edited.body, new RegExp(`metadata\\.labels: ${MAX_CHECKED_KEYS + 1} labels`));

    // A pod the administrator gave more annotations than the bound: the tenant may update it
    // while its annotations stay as they are (compared, not iterated), but not change them.
    const annotations = Object.fromEntries(
      Array.from({ length: 2 * MAX_CHECKED_KEYS }, (_, i) => [`team.example.com/a${i}`, "x"]),
    );
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "admin-annotated", annotations },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      },
    });
    const relabelled = await patchAs(TENANT, ns, "admin-annotated", {
      metadata: { labels: { app: "web" } },
    });
    assert.equal(relabelled.status, 200, relabelled.body.slice(0, 300));
    const trimmed = await patchAs(TENANT, ns, "admin-annotated", {
      metadata: { annotations: Object.fromEntries(Object.keys(annotations).map(k => [k, null])) },
    });
    assert.equal(trimmed.status, 403, trimmed.body.slice(0, 300));
    assert.match(
      trimmed.body,
      new RegExp(`metadata\\.annotations: ${2 * MAX_CHECKED_KEYS} annotations`),
    );
  });

  it("lets the module, as its own ServiceAccount, remove the finalizer when the tenant deletes the pod", async () => {
    const reply = await asUser(cluster, TENANT, {
      method: "DELETE",
      path: `/api/v1/namespaces/${ns}/pods/copied`,
    });
    assert.equal(reply.status, 200, reply.body);
    await waitUntil(
      "the module to release the never-started pod",
      async () => {
        try {
          await cluster.core.readNamespacedPod({ name: "copied", namespace: ns });
          return undefined;
        } catch (error) {
          return isNotFound(error) || undefined;
        }
      },
      30_000,
    );
  });
});
