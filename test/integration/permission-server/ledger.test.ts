// Revocation trusts only the permission server's ledger (PermissionGrant objects in its own
// namespace): a tenant who may patch its own pods cannot revoke, abort or clear another
// namespace's pod by naming that pod's UID; an edited or removed grant annotation changes nothing;
// a pod whose finalizer was removed by force is revoked by the sweep.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { CustomObjectsApi, type V1Pod } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import { userRole } from "../../harness/impersonation";
import { forwardRevokes } from "../../harness/permission-endpoint";
import type { RunningServer } from "../../../permission-server/server";
import {
  createGroup,
  createPod,
  deleteProvider,
  ordersRead,
  podToken,
  runInitFor,
  setPodIp,
  startAuthzProvider,
  startReplicas,
  waitGone,
} from "./helpers";

const cluster = testCluster();
const custom = cluster.kc.makeApiClient(CustomObjectsApi);
const GRANT_ANNOTATION = "permission.bulwark.dev/grant";

describe("permission server: revocation reads the ledger only", () => {
  let tenantNs: string;
  let victimNs: string;
  const drops: (() => Promise<void>)[] = [];
  let authz: AuthzApi;
  let provider: string;
  let server: RunningServer;
  let tenantToken: string;

  async function grantedPod(namespace: string, name: string, ip: string): Promise<V1Pod> {
    await createPod(cluster, namespace, name, "readers");
    const pod = await setPodIp(cluster, namespace, name, ip);
    assert.deepEqual(await runInitFor(server.url, pod, await podToken(cluster, pod)), {
      granted: true,
    });
    return pod;
  }

  interface LedgerObject {
    metadata: { labels: Record<string, string> };
    spec: {
      pod: { namespace: string; name: string; uid: string };
      entries: { ip: string; name: string; grantedAt?: string }[];
    };
  }

  async function ledgerOf(uid: string): Promise<LedgerObject | undefined> {
    try {
      return (await custom.getNamespacedCustomObject({
        group: "bulwark.dev",
        version: "v1alpha1",
        plural: "permissiongrants",
        namespace: tenantNs,
        name: uid,
      })) as LedgerObject;
    } catch {
      return undefined;
    }
  }

  const revoke = (body: unknown) =>
    fetch(`${server.url}/v1/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenantToken}` },
      body: JSON.stringify(body),
    });

  before(async () => {
    let drop: () => Promise<void>;
    [tenantNs, drop] = await testNamespace(cluster, "perm-tenant");
    drops.push(drop);
    [victimNs, drop] = await testNamespace(cluster, "perm-payments");
    drops.push(drop);
    // The server runs in the tenant's namespace here: its ledger is there, and the tenant's Role
    // gives no right to it (only pods).
    ({ authz, provider } = await startAuthzProvider(cluster, tenantNs, { grantLatencyMs: 50 }, 2));
    await createGroup(cluster, victimNs, "readers", { permissions: [ordersRead(provider)] });
    [server] = (await startReplicas(cluster, tenantNs, 1)) as [RunningServer];
    for (const ns of [tenantNs, victimNs]) {
      await forwardRevokes(cluster.permissionEndpointUrl, ns, server.url);
    }
    const user = `system:serviceaccount:${tenantNs}:tenant`;
    await applyOrThrow(cluster.kc, [
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "tenant", namespace: tenantNs },
      },
      ...userRole(tenantNs, "pod-patcher", user, [
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "patch"] },
      ]),
    ]);
    const token = await cluster.core.createNamespacedServiceAccountToken({
      name: "tenant",
      namespace: tenantNs,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    tenantToken = token.status?.token ?? "";
  });

  after(async () => {
    for (const ns of [tenantNs, victimNs]) {
      await forwardRevokes(cluster.permissionEndpointUrl, ns, null);
    }
    await server.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    for (const drop of drops) await drop();
  });

  it("records each grant in a PermissionGrant named by the pod UID, labelled by its IP", async () => {
    const pod = await grantedPod(tenantNs, "recorded", "127.0.6.10");
    const ledger = await ledgerOf(pod.metadata?.uid ?? "");
    assert.deepEqual(ledger?.spec.pod, {
      namespace: tenantNs,
      name: "recorded",
      uid: pod.metadata?.uid,
    });
    assert.deepEqual(
      ledger?.spec.entries.map(e => [e.ip, e.name]),
      [["127.0.6.10", "orders-read"]],
    );
    assert.ok(ledger?.spec.entries[0]?.grantedAt, "marked granted");
    assert.equal(ledger?.metadata.labels["ip.permission.bulwark.dev/127.0.6.10"], "");
  });

  it("refuses a tenant who names its own pod with another namespace's pod UID: nothing revoked, nothing aborted", async () => {
    const victim = await grantedPod(victimNs, "api-0", "127.0.6.1");
    await grantedPod(tenantNs, "mine", "127.0.6.2");
    const answer = await revoke({
      namespace: tenantNs,
      pod: "mine",
      uid: victim.metadata?.uid,
      // What an older body carried: ignored, the ledger decides.
      ip: "127.0.6.1",
      permissions: [ordersRead(provider)],
    });
    assert.equal(answer.status, 404);
    assert.match(((await answer.json()) as { error: string }).error, /has no UID/);
    assert.ok(authz.isGranted("127.0.6.1", "orders", "read"), "the victim keeps its grant");
    assert.ok(await ledgerOf(victim.metadata?.uid ?? ""), "and its ledger");
    // Naming the victim's pod itself needs the right to patch it.
    const direct = await revoke({ namespace: victimNs, pod: "api-0", uid: victim.metadata?.uid });
    assert.equal(direct.status, 403);
    assert.ok(authz.isGranted("127.0.6.1", "orders", "read"));
  });

  it("revokes the IP the ledger holds, whatever the pod's grant annotation was edited to", async () => {
    const bystander = await grantedPod(tenantNs, "bystander", "127.0.6.99");
    const edited = await grantedPod(tenantNs, "edited", "127.0.6.3");
    const removed = await grantedPod(tenantNs, "removed", "127.0.6.4");
    const record = JSON.parse(edited.metadata?.annotations?.[GRANT_ANNOTATION] ?? "{}");
    // An administrator (the policy keeps tenants out) points the mirror at the bystander's IP,
    // and strips the other pod's mirror.
    await cluster.core.patchNamespacedPod({
      name: "edited",
      namespace: tenantNs,
      body: [
        {
          op: "add",
          path: "/metadata/annotations/permission.bulwark.dev~1grant",
          value: JSON.stringify({ ...record, ip: "127.0.6.99" }),
        },
      ],
    });
    await cluster.core.patchNamespacedPod({
      name: "removed",
      namespace: tenantNs,
      body: [{ op: "remove", path: "/metadata/annotations/permission.bulwark.dev~1grant" }],
    });
    for (const name of ["edited", "removed"]) {
      await cluster.core.deleteNamespacedPod({ name, namespace: tenantNs });
      await waitGone(cluster, tenantNs, name);
    }
    assert.equal(authz.isGranted("127.0.6.3", "orders"), false, "the ledger's IP revoked");
    assert.equal(authz.isGranted("127.0.6.4", "orders"), false, "revoked without the mirror");
    assert.ok(authz.isGranted("127.0.6.99", "orders", "read"), "the bystander untouched");
    for (const pod of [edited, removed]) {
      assert.equal(await ledgerOf(pod.metadata?.uid ?? ""), undefined, "ledger emptied");
    }
    assert.ok(await ledgerOf(bystander.metadata?.uid ?? ""));
  });

  it("revokes, by its sweep, a pod whose finalizer was removed by force", async () => {
    const pod = await grantedPod(tenantNs, "forced", "127.0.6.5");
    await cluster.core.patchNamespacedPod({
      name: "forced",
      namespace: tenantNs,
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await cluster.core.deleteNamespacedPod({ name: "forced", namespace: tenantNs });
    await waitGone(cluster, tenantNs, "forced");
    await waitUntil(
      "the sweep to revoke the gone pod's grant",
      async () => !authz.isGranted("127.0.6.5", "orders") || undefined,
      20_000,
    );
    await waitUntil(
      "its ledger to be deleted",
      async () => (await ledgerOf(pod.metadata?.uid ?? "")) === undefined || undefined,
      10_000,
    );
  });
});
