// Pod pre-authorization through the real API server: CREATE-only injection (bare pods and a
// Deployment's), admission of groups and providers, and finalizer-held revocation.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  AppsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import type { RevokeCall } from "../../harness/permission-endpoint";
import { isNotFound } from "../../../kube/api-errors";
import {
  createPermissionGroup,
  permissionGroup,
  rejection,
  testCluster,
  testNamespace,
} from "../../harness/cluster";

const cluster = testCluster();
const custom = cluster.kc.makeApiClient(CustomObjectsApi);
const apps = cluster.kc.makeApiClient(AppsV1Api);
const BULWARK = { group: "bulwark.dev", version: "v1alpha1" };
const FINALIZER = "stke.io/podpermission-protection";

function pod(
  name: string,
  annotations: Record<string, string>,
  extra: Partial<V1Pod["spec"]> = {},
): V1Pod {
  return {
    metadata: { name, annotations },
    spec: {
      initContainers: [{ name: "istio-init", image: "istio/proxyv2:1" }],
      containers: [{ name: "app", image: "registry.example/app:1" }],
      ...extra,
    },
  };
}

async function gone(ns: string, name: string): Promise<boolean> {
  try {
    await cluster.core.readNamespacedPod({ name, namespace: ns });
    return false;
  } catch (error) {
    return isNotFound(error);
  }
}

async function revokeCalls(): Promise<RevokeCall[]> {
  return (await (
    await fetch(`${cluster.permissionEndpointUrl}/_test/calls`)
  ).json()) as RevokeCall[];
}

async function grant(ns: string, name: string, ip: string): Promise<V1Pod> {
  const current = await cluster.core.readNamespacedPod({ name, namespace: ns });
  const record = {
    ip,
    uid: current.metadata!.uid,
    group: "db-readers",
    permissions: [
      { name: "orders-read", provider: "authz", params: { resource: "orders", action: "read" } },
    ],
    grantedAt: new Date().toISOString(),
  };
  // The IP kubelet would post, then the record's mirror annotation (the stand-in endpoint plays
  // the server). Annotations only: a pod update that touched containers would be refused.
  await cluster.core.patchNamespacedPodStatus({
    name,
    namespace: ns,
    body: [{ op: "add", path: "/status/podIP", value: ip }],
  });
  return cluster.core.patchNamespacedPod({
    name,
    namespace: ns,
    body: [
      {
        op: "add",
        path: "/metadata/annotations/permission.bulwark.dev~1grant",
        value: JSON.stringify(record),
      },
    ],
  });
}

describe("pod permission", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let provider: string;

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "permission");
    provider = await createPermissionGroup(cluster, ns, "db-readers");
  });
  after(async () => drop());

  it("marks the provider and the group Ready", async () => {
    for (const [plural, namespace, name] of [
      ["permissionproviders", undefined, provider],
      ["permissiongroups", ns, "db-readers"],
    ] as const) {
      await waitUntil(`${plural} ${name} Ready=True`, async () => {
        const object = (
          namespace
            ? await custom.getNamespacedCustomObject({ ...BULWARK, namespace, plural, name })
            : await custom.getClusterCustomObject({ ...BULWARK, plural, name })
        ) as { status?: { conditions?: { type: string; status: string }[] } };
        return object.status?.conditions?.some(c => c.type === "Ready" && c.status === "True");
      });
    }
  });

  it("rejects a PermissionGroup naming an unknown provider or bad params, naming the field", async () => {
    const message = await rejection(() =>
      custom.createNamespacedCustomObject({
        ...BULWARK,
        namespace: ns,
        plural: "permissiongroups",
        body: {
          apiVersion: "bulwark.dev/v1alpha1",
          kind: "PermissionGroup",
          metadata: { name: "broken" },
          spec: {
            permissions: [
              { name: "a", provider: "nowhere", params: { resource: "x", action: "read" } },
              {
                name: "b",
                provider,
                params: { resource: "x", action: "delete-everything" },
              },
            ],
          },
        },
      }),
    );
    assert.match(message, /spec\.permissions\[0\]\.provider: provider "nowhere" does not exist/);
    assert.match(message, /spec\.permissions\[1\]\.params\.action/);
  });

  it("rejects a PermissionGroup outside its provider's namespaceSelector or allowedParams", async () => {
    const name = `scoped-${ns}`;
    await custom.createClusterCustomObject({
      ...BULWARK,
      plural: "permissionproviders",
      body: {
        apiVersion: "bulwark.dev/v1alpha1",
        kind: "PermissionProvider",
        metadata: { name },
        spec: {
          type: "http",
          address: "https://authz.example.com",
          namespaceSelector: { matchLabels: { "team.example.com/payments": "true" } },
          allowedParams: { resources: ["payments-*"] },
        },
      },
    });
    try {
      const group = (resource: string) =>
        custom.createNamespacedCustomObject({
          ...BULWARK,
          namespace: ns,
          plural: "permissiongroups",
          body: {
            apiVersion: "bulwark.dev/v1alpha1",
            kind: "PermissionGroup",
            metadata: { name: `uses-${resource}` },
            spec: {
              permissions: [{ name: "a", provider: name, params: { resource, action: "read" } }],
            },
          },
        });
      const outside = await rejection(() => group("payments-db"));
      assert.match(
        outside,
        new RegExp(
          `spec\\.permissions\\[0\\]\\.provider: provider "${name}" may not be used in namespace ${ns}`,
        ),
      );
      // Labelled into the selector, the namespace may use it, for what allowedParams lists only.
      await cluster.core.patchNamespace(
        {
          name: ns,
          body: { metadata: { labels: { "team.example.com/payments": "true" } } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      const params = await rejection(() => group("ledger"));
      assert.match(
        params,
        /spec\.permissions\[0\]\.params\.resource: "ledger" is not allowed by provider/,
      );
      await group("payments-db");
    } finally {
      await custom.deleteClusterCustomObject({ ...BULWARK, plural: "permissionproviders", name });
    }
  });

  it("injects bulwark-init first, the token, the finalizer and the pending status in one CREATE", async () => {
    const created = await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("bare", { "permission.bulwark.dev/group": "db-readers" }),
    });
    const init = created.spec?.initContainers ?? [];
    assert.deepEqual(
      init.map(c => c.name),
      ["bulwark-init", "istio-init"],
    );
    const env = Object.fromEntries(
      (init[0]?.env ?? []).map(e => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]),
    );
    assert.equal(env.POD_IP, "status.podIP");
    assert.equal(env.POD_UID, "metadata.uid");
    assert.equal(env.BULWARK_PERMISSION_GROUP, "db-readers");
    // HTTPS, trusting exactly the CA the module read from the serving Secret (ENDPOINT_CA_SECRET).
    assert.equal(env.BULWARK_PERMISSION_SERVER, cluster.permissionServerUrl);
    assert.match(env.BULWARK_PERMISSION_SERVER ?? "", /^https:\/\//);
    assert.equal(env.BULWARK_PERMISSION_CA, cluster.permissionCa);
    const token = created.spec?.volumes?.find(v => v.name === "bulwark-token")?.projected
      ?.sources?.[0]?.serviceAccountToken;
    assert.equal(token?.audience, "bulwark-permission-server");
    assert.deepEqual(created.metadata?.finalizers, [FINALIZER]);
    assert.equal(created.metadata?.annotations?.["permission.bulwark.dev/status"], "pending");
    assert.deepEqual(
      created.spec?.containers?.map(c => c.name),
      ["app"],
      "app containers untouched",
    );
    // The watcher tells the owner, on the pod (kubectl describe), once.
    const injected = await waitUntil("an Injected Event on the pod", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: "involvedObject.name=bare",
      });
      return events.items.find(e => e.reason === "Injected");
    });
    assert.equal(injected.involvedObject.uid, created.metadata?.uid);
    assert.equal(injected.reportingComponent, "bulwark.dev/pod-permission");
    assert.match(injected.message ?? "", /bulwark-init injected for PermissionGroup db-readers/);
  });

  it("injects a pod with 15 000 env vars at once, and admits the next pod without waiting on it", async () => {
    // Pepr copies each review; with ramda's clone that took time quadratic in the objects of one
    // shape (each env var and its managed-fields entries): this 1.3 MB review held the admission
    // process past the webhook's 10 s timeout, and was refused, as was every pod behind it.
    const env = Array.from({ length: 15_000 }, (_, i) => ({ name: `E${i}`, value: "v" }));
    const big = pod("many-env", { "permission.bulwark.dev/group": "db-readers" });
    big.spec!.containers[0]!.env = env;
    const [bigCreated, next] = await Promise.all([
      cluster.core.createNamespacedPod({ namespace: ns, body: big, dryRun: "All" }),
      new Promise(r => setTimeout(r, 200)).then(() =>
        cluster.core.createNamespacedPod({
          namespace: ns,
          body: pod("behind-many-env", { "permission.bulwark.dev/group": "db-readers" }),
          dryRun: "All",
        }),
      ),
    ]);
    for (const created of [bigCreated, next]) {
      assert.equal(created.spec?.initContainers?.[0]?.name, "bulwark-init", created.metadata?.name);
    }
    assert.equal(bigCreated.spec?.containers?.[0]?.env?.length, 15_000);
  });

  it("rejects a group that does not exist, and a hostNetwork pod, with clear messages", async () => {
    const missing = await rejection(() =>
      cluster.core.createNamespacedPod({
        namespace: ns,
        body: pod("no-group", { "permission.bulwark.dev/group": "nope" }),
      }),
    );
    assert.match(missing, /names PermissionGroup "nope", which does not exist in namespace/);
    const host = await rejection(() =>
      cluster.core.createNamespacedPod({
        namespace: ns,
        body: pod("host", { "permission.bulwark.dev/group": "db-readers" }, { hostNetwork: true }),
      }),
    );
    assert.match(host, /hostNetwork/);
    const windows = await rejection(() =>
      cluster.core.createNamespacedPod({
        namespace: ns,
        body: pod(
          "windows",
          { "permission.bulwark.dev/group": "db-readers" },
          { os: { name: "windows" } },
        ),
      }),
    );
    assert.match(windows, /spec\.os\.name: "windows" pods cannot use permission groups/);
  });

  it("admits a pod naming a group created a moment before, and refuses it once the group is deleted", async () => {
    // Admission keeps the groups it has seen from a watch (known-groups.ts): a group the watch
    // has not delivered yet is read from the API server, and a deleted one leaves the watch.
    const group = "fresh-readers";
    const tryPod = (name: string) =>
      cluster.core.createNamespacedPod({
        namespace: ns,
        body: pod(name, { "permission.bulwark.dev/group": group }),
        dryRun: "All",
      });
    await custom.createNamespacedCustomObject({
      ...BULWARK,
      namespace: ns,
      plural: "permissiongroups",
      body: permissionGroup(group, provider),
    });
    const admitted = await tryPod("right-after");
    assert.equal(admitted.spec?.initContainers?.[0]?.name, "bulwark-init");
    await custom.deleteNamespacedCustomObject({
      ...BULWARK,
      namespace: ns,
      plural: "permissiongroups",
      name: group,
    });
    // Until the watch delivers the deletion, the pod is still admitted (rejection throws then).
    const refused = await waitUntil("a pod naming the deleted group to be refused", () =>
      rejection(() => tryPod("after-delete")).catch(() => false as const),
    );
    assert.match(
      refused,
      /names PermissionGroup "fresh-readers", which does not exist in namespace/,
    );
  });

  it("injects a pod created with Bulwark's annotations copied from another (a saved manifest)", async () => {
    const created = await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("copied", {
        "permission.bulwark.dev/group": "db-readers",
        "permission.bulwark.dev/status": '{"phase":"granted","uid":"someone-else","ip":"10.0.0.5"}',
        "permission.bulwark.dev/grant": '{"ip":"10.0.0.5","uid":"someone-else"}',
      }),
    });
    assert.equal(created.spec?.initContainers?.[0]?.name, "bulwark-init");
    assert.ok(created.metadata?.finalizers?.includes("stke.io/podpermission-protection"));
    assert.equal(created.metadata?.annotations?.["permission.bulwark.dev/status"], "pending");
    assert.equal(created.metadata?.annotations?.["permission.bulwark.dev/grant"], undefined);
  });

  it("injects exactly once into every pod of a Deployment", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: {
              labels: { app: "web" },
              annotations: { "permission.bulwark.dev/group": "db-readers" },
            },
            spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
          },
        },
      },
    });
    const pods = await waitUntil(
      "the Deployment's two pods",
      async () => {
        const list = await cluster.core.listNamespacedPod({
          namespace: ns,
          labelSelector: "app=web",
        });
        return list.items.length === 2 ? list.items : undefined;
      },
      60_000,
    );
    for (const p of pods) {
      assert.deepEqual(
        p.spec?.initContainers?.map(c => c.name),
        ["bulwark-init"],
      );
      assert.deepEqual(p.metadata?.finalizers, [FINALIZER]);
    }
  });

  it("releases a never-granted pod at once when it is deleted", async () => {
    await cluster.core.deleteNamespacedPod({ name: "bare", namespace: ns });
    await waitUntil("the never-granted pod to be gone", () => gone(ns, "bare"), 30_000);
  });

  it("holds a granted pod until the revoke call succeeds, retrying through endpoint failures", async () => {
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("granted", { "permission.bulwark.dev/group": "db-readers" }),
    });
    const granted = await grant(ns, "granted", "10.1.2.3");
    await fetch(`${cluster.permissionEndpointUrl}/_test/fail?count=2&namespace=${ns}`, {
      method: "POST",
    });
    await cluster.core.deleteNamespacedPod({ name: "granted", namespace: ns });

    const held = await cluster.core.readNamespacedPod({ name: "granted", namespace: ns });
    assert.ok(held.metadata?.deletionTimestamp, "the finalizer holds the deletion");
    await waitUntil(
      "the pod to be gone after the revoke succeeded",
      () => gone(ns, "granted"),
      60_000,
      250,
    );
    const calls = (await revokeCalls()).filter(c => c.uid === granted.metadata?.uid);
    assert.deepEqual(
      calls.map(c => c.answeredStatus),
      [503, 503, 200],
    );
    // The module names the pod; the server's ledger says what was granted where.
    assert.deepEqual(
      [calls[2]?.namespace, calls[2]?.pod, calls[2]?.ip, calls[2]?.permissions],
      [ns, "granted", undefined, undefined],
    );
  });

  it("still revokes and releases a terminating pod whose managed label an administrator removed", async () => {
    // The revoker follows a pod by the managed label or by the finalizer: a watch selected by the
    // label alone would see this pod as deleted and leave its finalizer (and grants) forever.
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("unlabelled", { "permission.bulwark.dev/group": "db-readers" }),
    });
    const granted = await grant(ns, "unlabelled", "10.1.2.4");
    assert.equal(granted.metadata?.labels?.["permission.bulwark.dev/managed"], "true");
    await fetch(`${cluster.permissionEndpointUrl}/_test/fail?count=3&namespace=${ns}`, {
      method: "POST",
    });
    await cluster.core.deleteNamespacedPod({ name: "unlabelled", namespace: ns });
    // system:masters may edit Bulwark's metadata (metadata-policy.ts); the finalizer stays.
    const unlabelled = await cluster.core.patchNamespacedPod({
      name: "unlabelled",
      namespace: ns,
      body: [{ op: "remove", path: "/metadata/labels/permission.bulwark.dev~1managed" }],
    });
    assert.ok(unlabelled.metadata?.deletionTimestamp, "the label went while the pod terminated");
    assert.deepEqual(unlabelled.metadata?.finalizers, [FINALIZER]);
    await waitUntil(
      "the unlabelled pod to be revoked and gone",
      () => gone(ns, "unlabelled"),
      60_000,
      250,
    );
    const calls = (await revokeCalls()).filter(c => c.uid === granted.metadata?.uid);
    assert.deepEqual(
      calls.map(c => c.answeredStatus),
      [503, 503, 503, 200],
    );
  });

  it("revokes by the deleted pod's UID, never touching the new pod that now has its IP", async () => {
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("old", { "permission.bulwark.dev/group": "db-readers" }),
    });
    const old = await grant(ns, "old", "10.9.9.9");
    const fresh = await cluster.core.createNamespacedPod({
      namespace: ns,
      body: pod("new", { "permission.bulwark.dev/group": "db-readers" }),
    });
    await cluster.core.patchNamespacedPodStatus({
      name: "new",
      namespace: ns,
      body: [{ op: "add", path: "/status/podIP", value: "10.9.9.9" }],
    });
    await cluster.core.deleteNamespacedPod({ name: "old", namespace: ns });
    await waitUntil("the old pod to be gone", () => gone(ns, "old"), 30_000);
    const uids = [old.metadata?.uid, fresh.metadata?.uid];
    const calls = (await revokeCalls()).filter(c => uids.includes(c.uid));
    assert.deepEqual(
      calls.map(c => c.uid),
      [old.metadata?.uid],
    );
    assert.notEqual(old.metadata?.uid, fresh.metadata?.uid);
    assert.equal(
      (await cluster.core.readNamespacedPod({ name: "new", namespace: ns })).metadata
        ?.deletionTimestamp,
      undefined,
    );
  });

  it("revokes every pod deleted while the watcher was down, once it is back", async () => {
    const names = ["down-1", "down-2", "down-3"];
    const uids: string[] = [];
    for (const [i, name] of names.entries()) {
      await cluster.core.createNamespacedPod({
        namespace: ns,
        body: pod(name, { "permission.bulwark.dev/group": "db-readers" }),
      });
      uids.push((await grant(ns, name, `10.7.0.${i + 1}`)).metadata!.uid!);
    }
    const watcherPid = Number(readFileSync(cluster.watcherPidFile, "utf8"));
    process.kill(watcherPid, "SIGKILL");
    for (const name of names) await cluster.core.deleteNamespacedPod({ name, namespace: ns });
    // Nobody revokes while the watcher is down: the finalizer holds every pod.
    await new Promise(r => setTimeout(r, 1000));
    for (const name of names) {
      const held = await cluster.core.readNamespacedPod({ name, namespace: ns });
      assert.ok(held.metadata?.deletionTimestamp && held.metadata.finalizers?.includes(FINALIZER));
    }
    await waitUntil(
      "a new watcher",
      async () => Number(readFileSync(cluster.watcherPidFile, "utf8")) !== watcherPid,
      30_000,
    );
    for (const name of names)
      await waitUntil(`${name} to be revoked and gone`, () => gone(ns, name), 60_000, 250);
    const revoked = new Set(
      (await revokeCalls()).filter(c => c.answeredStatus === 200).map(c => c.uid),
    );
    assert.deepEqual(
      uids.filter(uid => !revoked.has(uid)),
      [],
    );
  });
});
