// Several replicas: the claim on the pod (a lease written with resourceVersion preconditions)
// makes two replicas asked at once run one grant between them, and a replica killed mid-grant is
// replaced by another once its claim expires; the pod still ends granted.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { waitUntil } from "../../harness/wait";
import { startProcess } from "../../../hack/control-plane/processes";
import { freePort } from "../../../hack/control-plane/ports";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import type { RunningServer } from "../../../permission-server/server";
import {
  annotation,
  createPod,
  deleteProvider,
  FAST_SETTINGS,
  podToken,
  runInitFor,
  setPodIp,
  startReplicas,
  startAuthzProvider,
} from "./helpers";

const cluster = testCluster();
const ROOT = join(__dirname, "..", "..", "..");

describe("permission server: several replicas", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let servers: RunningServer[];
  let provider: string;

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-rep");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 1000 }, 2));
    servers = await startReplicas(cluster, ns, 2);
  });

  after(async () => {
    for (const server of servers) await server.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
  });

  it("two replicas asked at once for the same pod run one grant between them", async () => {
    await createPod(cluster, ns, "twice", "readers");
    const pod = await setPodIp(cluster, ns, "twice", "127.0.4.1");
    const token = await podToken(cluster, pod);
    const before = authz.stats().grantsPosted;
    const results = await Promise.all(servers.map(s => runInitFor(s.url, pod, token)));
    assert.deepEqual(results, [{ granted: true }, { granted: true }]);
    assert.equal(authz.stats().grantsPosted - before, 1, "one grant request, not two");
    assert.ok(authz.isGranted("127.0.4.1", "orders", "read"));
  });

  it("a replica killed mid-grant is replaced once its claim expires; the pod ends granted", async () => {
    // Slow enough that the replica dies with the job pending, quick enough for the grant timeout.
    authz.configure({ grantLatencyMs: 6000 });
    await createPod(cluster, ns, "orphan", "readers");
    const pod = await setPodIp(cluster, ns, "orphan", "127.0.4.2");
    const token = await podToken(cluster, pod);
    const port = await freePort();
    const doomed = startProcess(
      "permission-server-doomed",
      process.execPath,
      ["--import", "tsx", join(ROOT, "permission-server", "main.ts")],
      {
        cwd: ROOT,
        logFile: join(cluster.dir, "logs", `permission-server-doomed-${ns}.log`),
        env: {
          ...process.env,
          ...FAST_SETTINGS,
          BULWARK_CLAIM_TTL: "3s",
          KUBECONFIG: cluster.kubeconfigPath,
          BULWARK_NAMESPACE: ns,
          BULWARK_PERMISSION_HOST: "127.0.0.1",
          BULWARK_PERMISSION_PORT: String(port),
          BULWARK_REPLICA_NAME: "doomed",
          LOG_LEVEL: "warn",
        },
      },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitUntil("the doomed replica", async () => (await fetch(`${url}/healthz`)).ok, 30_000);
    const started = await fetch(`${url}/v1/grants`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        namespace: ns,
        pod: "orphan",
        uid: pod.metadata?.uid,
        ip: "127.0.4.2",
      }),
    });
    assert.equal(started.status, 202);
    const claimed = await waitUntil("the doomed replica's claim and pending grant", async () => {
      const current = await cluster.core.readNamespacedPod({ name: "orphan", namespace: ns });
      const status = JSON.parse(annotation(current, "permission.bulwark.dev/status") ?? "{}");
      return status.permissions?.[0]?.jobId ? current : undefined;
    });
    assert.match(annotation(claimed, "permission.bulwark.dev/claim") ?? "", /"holder":"doomed"/);
    process.kill(doomed.pid, "SIGKILL");
    await doomed.exited;
    // The job the dead replica started goes on at the API; the new replica's grant (idempotent)
    // finds that same job and polls it to the end.
    const result = await runInitFor((servers[0] as RunningServer).url, pod, token);
    assert.deepEqual(result, { granted: true });
    const current = await cluster.core.readNamespacedPod({ name: "orphan", namespace: ns });
    assert.equal(annotation(current, "permission.bulwark.dev/claim"), undefined);
    assert.ok(authz.isGranted("127.0.4.2", "orders", "read"));
    assert.equal(
      authz.grantHistory().filter(g => g.ip === "127.0.4.2").length,
      1,
      "one grant at the API, though two replicas worked on it",
    );
  });
});
