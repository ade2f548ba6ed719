// The permission server answers only the pod a token is bound to: a pod's own projected token
// is granted; a forged token, another pod's token and a token for another audience are refused;
// revoke calls need a token that may patch the pod (the Pepr watcher's), and the finalizer path
// reaches the real server through the stand-in endpoint's forward.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import { forwardRevokes, type RevokeCall } from "../../harness/permission-endpoint";
import { WATCHER_NAMESPACE, WATCHER_SERVICE_ACCOUNT } from "../../harness/watcher-identity";
import type { RunningServer } from "../../../permission-server/server";
import {
  annotation,
  createPod,
  deleteProvider,
  podToken,
  runInitFor,
  setPodIp,
  startReplicas,
  waitGone,
  startAuthzProvider,
} from "./helpers";

const cluster = testCluster();

/** A JWT-shaped token claiming to be `pod`, signed by nobody we trust. */
function forgedToken(pod: V1Pod): string {
  const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  const claims = {
    iss: cluster.server,
    aud: ["bulwark-permission-server"],
    sub: `system:serviceaccount:${pod.metadata?.namespace}:default`,
    exp: Math.floor(Date.now() / 1000) + 3600,
    "kubernetes.io": {
      namespace: pod.metadata?.namespace,
      pod: { name: pod.metadata?.name, uid: pod.metadata?.uid },
      serviceaccount: { name: "default", uid: "00000000-0000-0000-0000-000000000000" },
    },
  };
  return `${b64({ alg: "RS256", kid: "forged" })}.${b64(claims)}.${Buffer.from("not a signature").toString("base64url")}`;
}

describe("permission server: who may ask", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let server: RunningServer;
  let provider: string;
  let first: V1Pod;
  let firstToken: string;
  let second: V1Pod;

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-auth");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 200 }, 2));
    [server] = (await startReplicas(cluster, ns, 1)) as [RunningServer];
    await forwardRevokes(cluster.permissionEndpointUrl, ns, server.url);
    await createPod(cluster, ns, "first", "readers");
    first = await setPodIp(cluster, ns, "first", "127.0.1.1");
    firstToken = await podToken(cluster, first);
    await createPod(cluster, ns, "second", "readers");
    second = await setPodIp(cluster, ns, "second", "127.0.1.2");
  });

  after(async () => {
    await forwardRevokes(cluster.permissionEndpointUrl, ns, null);
    await server.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
  });

  it("grants a pod that presents its own bound token, and records the grant on the pod", async () => {
    const result = await runInitFor(server.url, first, firstToken);
    assert.deepEqual(result, { granted: true });
    assert.ok(authz.isGranted("127.0.1.1", "orders", "read"));
    const pod = await cluster.core.readNamespacedPod({ name: "first", namespace: ns });
    const status = JSON.parse(annotation(pod, "permission.bulwark.dev/status") ?? "{}");
    assert.equal(status.phase, "granted");
    assert.equal(status.ip, "127.0.1.1");
    assert.deepEqual(
      status.permissions.map((p: { name: string; state: string }) => [p.name, p.state]),
      [["orders-read", "granted"]],
    );
    const record = JSON.parse(annotation(pod, "permission.bulwark.dev/grant") ?? "{}");
    assert.equal(record.uid, pod.metadata?.uid);
    assert.equal(record.ip, "127.0.1.1");
    assert.equal(annotation(pod, "permission.bulwark.dev/claim"), undefined, "claim released");
    // The init client's answer comes from the status write; the Event is recorded after it.
    await waitUntil("a Granted Event", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: `involvedObject.name=first`,
      });
      return events.items.some(e => e.reason === "Granted");
    });
  });

  it("refuses a forged token", async () => {
    const result = await runInitFor(server.url, second, forgedToken(second));
    assert.equal(result.granted, false);
    assert.match((result as { reason: string }).reason, /^refused: 401 token not valid/);
  });

  it("refuses another pod's token", async () => {
    const result = await runInitFor(server.url, second, firstToken);
    assert.equal(result.granted, false);
    assert.match(
      (result as { reason: string }).reason,
      new RegExp(`^refused: 403 token is bound to pod ${ns}/first`),
    );
    assert.equal(authz.isGranted("127.0.1.2", "orders"), false);
  });

  it("refuses the pod's token for another audience", async () => {
    const other = await podToken(cluster, second, "some-other-service");
    const result = await runInitFor(server.url, second, other);
    assert.equal(result.granted, false);
    assert.match(
      (result as { reason: string }).reason,
      /^refused: 401 token not valid for audience/,
    );
    assert.equal(authz.isGranted("127.0.1.2", "orders"), false);
  });

  it("refuses revoke calls without a token that may patch the pod", async () => {
    const body = JSON.stringify({
      uid: first.metadata?.uid,
      ip: "127.0.1.1",
      group: "readers",
      namespace: ns,
      pod: "first",
      permissions: [
        { name: "orders-read", provider, params: { resource: "orders", action: "read" } },
      ],
      grantedAt: new Date().toISOString(),
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/revoke`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    assert.equal((await post({})).status, 401);
    // A pod's own token is for the permission server's audience only, not a controller's.
    assert.equal((await post({ authorization: `Bearer ${firstToken}` })).status, 401);
    assert.ok(authz.isGranted("127.0.1.1", "orders", "read"), "nothing revoked");
  });

  it("revokes a deleted pod's grants through the finalizer path, with the watcher's token", async () => {
    await cluster.core.deleteNamespacedPod({ name: "first", namespace: ns });
    await waitGone(cluster, ns, "first");
    assert.equal(authz.isGranted("127.0.1.1", "orders"), false);
    const calls = (await (
      await fetch(`${cluster.permissionEndpointUrl}/_test/calls`)
    ).json()) as RevokeCall[];
    const mine = calls.filter(c => c.uid === first.metadata?.uid);
    assert.ok(mine.length >= 1);
    const last = mine.at(-1) as RevokeCall;
    assert.equal(last.forwardedTo, server.url);
    assert.equal(last.answeredStatus, 200);
    assert.equal(last.authenticated, true);
  });

  it("serves the reset endpoint only to a token that may patch the pod", async () => {
    const reset = (authorization?: string) =>
      fetch(`${server.url}/v1/reset`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(authorization ? { authorization: `Bearer ${authorization}` } : {}),
        },
        body: JSON.stringify({ namespace: ns, pod: "second" }),
      });
    assert.equal((await reset()).status, 401);
    assert.equal((await reset(await podToken(cluster, second))).status, 401, "a pod's own token");
    const watcher = await cluster.core.createNamespacedServiceAccountToken({
      name: WATCHER_SERVICE_ACCOUNT,
      namespace: WATCHER_NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const allowed = await reset(watcher.status?.token);
    assert.equal(allowed.status, 200);
    assert.deepEqual(await allowed.json(), { reset: true, uid: second.metadata?.uid });
    const nobody = await cluster.core.createNamespacedServiceAccountToken({
      name: "default",
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const refused = await reset(nobody.status?.token);
    assert.equal(refused.status, 403);
    assert.match(
      ((await refused.json()) as { error: string }).error,
      new RegExp(`system:serviceaccount:${ns}:default may not patch pod ${ns}/second`),
    );
  });

  it("serves /healthz and /metrics", async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /bulwark_permission_jobs_total\{provider="[^"]+",outcome="granted"\} 1/);
    await waitUntil("metrics to count the refused calls", async () =>
      /bulwark_permission_http_requests_total\{route="grants",code="403"\}/.test(
        await (await fetch(`${server.url}/metrics`)).text(),
      ),
    );
  });
});
