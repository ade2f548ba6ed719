// A pod's life around its grants: CMDB registration before the grants (and deregistration with
// them), revocation that keeps what a live pod now at the same IP holds, and the prune sweep
// that removes breaker entries of pods that are gone.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { waitUntil } from "../../harness/wait";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import { forwardRevokes, type RevokeCall } from "../../harness/permission-endpoint";
import type { RunningServer } from "../../../permission-server/server";
import {
  annotation,
  createGroup,
  createPod,
  deleteProvider,
  podToken,
  runInitFor,
  setPodIp,
  startReplicas,
  waitGone,
  ordersRead,
  startAuthzProvider,
} from "./helpers";

const cluster = testCluster();
const BREAKERS = "bulwark-permission-breakers";

describe("permission server: registration, revocation and pruning", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let server: RunningServer;
  let provider: string;

  async function grantedPod(name: string, group: string, ip: string) {
    await createPod(cluster, ns, name, group);
    const pod = await setPodIp(cluster, ns, name, ip);
    assert.deepEqual(await runInitFor(server.url, pod, await podToken(cluster, pod)), {
      granted: true,
    });
    return pod;
  }

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-life");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 200 }, 2));
    await createGroup(cluster, ns, "registered", {
      permissions: [ordersRead(provider)],
      registerWithCmdb: true,
    });
    [server] = (await startReplicas(cluster, ns, 1, { BULWARK_CMDB_PROVIDER: provider })) as [
      RunningServer,
    ];
    await forwardRevokes(cluster.permissionEndpointUrl, ns, server.url);
  });

  after(async () => {
    await forwardRevokes(cluster.permissionEndpointUrl, ns, null);
    await server.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
  });

  it("registers the pod with the CMDB before granting, and deregisters it with the revocation", async () => {
    await grantedPod("reg-1", "registered", "127.0.5.1");
    assert.deepEqual(
      authz
        .grantHistory()
        .filter(g => g.ip === "127.0.5.1")
        .map(g => g.resource),
      ["cmdb/pods", "orders"],
      "registration first",
    );
    const pod = await cluster.core.readNamespacedPod({ name: "reg-1", namespace: ns });
    const status = JSON.parse(annotation(pod, "permission.bulwark.dev/status") ?? "{}");
    assert.deepEqual(
      status.permissions.map((p: { name: string }) => p.name),
      ["cmdb-registration", "orders-read"],
    );
    await cluster.core.deleteNamespacedPod({ name: "reg-1", namespace: ns });
    await waitGone(cluster, ns, "reg-1");
    assert.equal(authz.isGranted("127.0.5.1", "cmdb/pods"), false);
    assert.equal(authz.isGranted("127.0.5.1", "orders"), false);
  });

  it("revoking a deleted pod keeps the permission a live pod now holds at the same (reused) IP", async () => {
    const old = await grantedPod("old", "readers", "127.0.5.9");
    await grantedPod("new", "readers", "127.0.5.9");
    await cluster.core.deleteNamespacedPod({ name: "old", namespace: ns });
    await waitGone(cluster, ns, "old");
    assert.ok(authz.isGranted("127.0.5.9", "orders", "read"), "the new pod keeps its permission");
    const calls = (await (
      await fetch(`${cluster.permissionEndpointUrl}/_test/calls`)
    ).json()) as RevokeCall[];
    assert.equal(calls.filter(c => c.uid === old.metadata?.uid).at(-1)?.answeredStatus, 200);
    await cluster.core.deleteNamespacedPod({ name: "new", namespace: ns });
    await waitGone(cluster, ns, "new");
    assert.equal(authz.isGranted("127.0.5.9", "orders"), false, "revoked with the last pod");
  });

  it("re-grants a pod whose IP changed (sandbox recreated) and revokes the old IP", async () => {
    const pod = await grantedPod("moved", "readers", "127.0.5.20");
    const token = await podToken(cluster, pod);
    const moved = await setPodIp(cluster, ns, "moved", "127.0.5.21");
    assert.deepEqual(await runInitFor(server.url, moved, token), { granted: true });
    assert.ok(authz.isGranted("127.0.5.21", "orders", "read"), "granted at the new IP");
    assert.equal(authz.isGranted("127.0.5.20", "orders"), false, "the old IP revoked");
    const current = await cluster.core.readNamespacedPod({ name: "moved", namespace: ns });
    assert.equal(
      JSON.parse(annotation(current, "permission.bulwark.dev/grant") ?? "{}").ip,
      "127.0.5.21",
    );
  });

  it("prunes breaker entries of pods that are gone, and keeps those of live pods", async () => {
    const live = await createPod(cluster, ns, "live-1", "readers");
    const liveUid = live.metadata?.uid ?? "";
    const goneUid = "00000000-0000-0000-0000-0000000000aa";
    const entry = (name: string) =>
      JSON.stringify({
        failures: 1,
        lastError: "denied",
        pod: { namespace: ns, name },
        retry: {
          backoff: { durationMs: 1000, factor: 2, jitter: 1, steps: 4, capMs: 10_000 },
          lastFailureAt: "2026-01-01T00:00:00.000Z",
          nextAttemptAt: "2026-01-01T00:00:01.000Z",
        },
      });
    const current = await cluster.core
      .readNamespacedConfigMap({ name: BREAKERS, namespace: ns })
      .catch(() => undefined);
    const data = { ...current?.data, [liveUid]: entry("live-1"), [goneUid]: entry("gone-1") };
    if (current) {
      await cluster.core.replaceNamespacedConfigMap({
        name: BREAKERS,
        namespace: ns,
        body: { ...current, data },
      });
    } else {
      await cluster.core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: BREAKERS }, data },
      });
    }
    const after = await waitUntil(
      "the gone pod's entry to be pruned",
      async () => {
        const read = await cluster.core.readNamespacedConfigMap({ name: BREAKERS, namespace: ns });
        return read.data?.[goneUid] === undefined ? read.data : undefined;
      },
      20_000,
    );
    assert.ok(after?.[liveUid], "the live pod's entry stays");
  });
});
