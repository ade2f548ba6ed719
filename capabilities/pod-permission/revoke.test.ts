// The watcher's revocation of a deleted pod's grants: its calls to the permission server, its
// finalizer patch, its Events, and its timing (Kubernetes' backoff between retries, the deadline
// after which the finalizer goes anyway), on node:test mock timers. revoke.ts reaches the cluster
// through the kept-alive client, which follows KUBECONFIG, and the permission server through the
// URL in its settings: both point at one stand-in (test/harness/kube-stand-in.ts).
import {
  after,
  afterEach,
  before,
  beforeEach,
  describe,
  it,
  type MockTimers,
  type TestContext,
} from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionPod } from "../../core/permission";
import { PERMISSION_MANAGED_LABEL, POD_PERMISSION_FINALIZER } from "../../core/names";
import { KubeStandIn, type StandInObject } from "../../test/harness/kube-stand-in";
import { waitUntil } from "../../test/harness/wait";
import { isPermissionPod, Revoker } from "./revoke";
import { loadSettings } from "./settings";

const T0 = Date.parse("2031-03-01T10:00:00.000Z");
const DEADLINE_S = 5;
const OTHER_FINALIZER = "example.com/keep";

function pod(name: string, extra: { ip?: string; deleting?: boolean } = {}): StandInObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      namespace: "shop",
      name,
      uid: `uid-${name}`,
      labels: { [PERMISSION_MANAGED_LABEL]: "true" },
      finalizers: [OTHER_FINALIZER, POD_PERMISSION_FINALIZER],
      ...(extra.deleting === false ? {} : { deletionTimestamp: new Date(T0).toISOString() }),
    },
    spec: { containers: [{ name: "app", image: "app" }] },
    status: extra.ip === undefined ? {} : { podIP: extra.ip },
  };
}

describe("Revoker against a stand-in API and permission server, on mock timers", () => {
  let api: KubeStandIn;
  let dir: string;
  let revokeAnswers: { status: number; body?: unknown }[];
  const kubeconfig = process.env.KUBECONFIG;

  before(async () => {
    api = await KubeStandIn.start();
    process.env.KUBECONFIG = api.kubeconfig();
    dir = mkdtempSync(join(tmpdir(), "revoke-"));
    writeFileSync(join(dir, "token"), "watcher-token\n");
    api.route("POST", "/v1/revoke", () => revokeAnswers.shift() ?? { status: 500 });
  });

  after(async () => {
    process.env.KUBECONFIG = kubeconfig;
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let timers: MockTimers;
  /** The delays of the timers set so far in this test: when the Revoker schedules its retries. */
  let scheduled: number[];
  let mockedSetTimeout: (callback: () => void, ms: number, ...rest: unknown[]) => NodeJS.Timeout;

  beforeEach(t => {
    revokeAnswers = [];
    scheduled = [];
    // This test's own mock timers (a fresh queue each test), undone when it ends.
    const { mock } = t as TestContext; // beforeEach runs per test: its context is the test's
    timers = mock.timers;
    timers.enable({ apis: ["setTimeout", "Date"], now: T0 });
    mockedSetTimeout = globalThis.setTimeout as typeof mockedSetTimeout;
    globalThis.setTimeout = ((callback: () => void, ms: number, ...rest: unknown[]) => {
      scheduled.push(ms);
      return mockedSetTimeout(callback, ms, ...rest);
    }) as typeof setTimeout;
    // No jitter: the backoff waits exactly 1 s, 2 s, 4 s.
    mock.method(Math, "random", () => 0);
  });

  afterEach(() => {
    globalThis.setTimeout = mockedSetTimeout as typeof setTimeout;
  });

  /** Waits until the Revoker has set its next retry's timer (it does so after its Event). */
  const retryScheduled = (count: number) =>
    waitUntil(`retry ${count} to be scheduled`, () => scheduled.length >= count);

  function revoker(): Revoker {
    return new Revoker(
      loadSettings({
        BULWARK_PERMISSION_SERVER: api.url,
        BULWARK_REVOKE_TOKEN_PATH: join(dir, "token"),
        BULWARK_REVOKE_DEADLINE_SECONDS: String(DEADLINE_S),
      }),
    );
  }

  const revokeCalls = (uid: string) =>
    api.seen("POST", /^\/v1\/revoke$/).filter(r => (r.body as { uid?: string }).uid === uid);
  const finalizers = (name: string) =>
    (api.get("/api/v1", "pods", "shop", name)?.metadata?.finalizers as string[] | undefined) ?? [];
  const events = (name: string) =>
    api
      .created("events")
      .filter(e => (e.involvedObject as { name?: string } | undefined)?.name === name)
      .map(e => `${String(e.type)} ${String(e.reason)}: ${String(e.message)}`);

  it("given a deleted pod, asks the server to revoke its UID with the watcher's token, then removes only its finalizer", async () => {
    const target = api.put("/api/v1", "pods", pod("revoked", { ip: "10.0.0.1" }));
    revokeAnswers.push({ status: 200, body: { revoked: ["orders"], kept: [], ips: ["10.0.0.1"] } });
    await revoker().handle(target as PermissionPod);
    const [call] = revokeCalls("uid-revoked");
    assert.deepEqual(call?.body, { namespace: "shop", pod: "revoked", uid: "uid-revoked" });
    assert.equal(call?.authorization, "Bearer watcher-token");
    assert.deepEqual(finalizers("revoked"), [OTHER_FINALIZER]);
    assert.deepEqual(events("revoked"), ["Normal Revoked: revoked orders for 10.0.0.1"]);
  });

  it("given a failing server, retries on a fresh read after 1 s, then 2 s, and releases once it answers", async () => {
    const target = api.put("/api/v1", "pods", pod("flaky", { ip: "10.0.0.2" }));
    revokeAnswers.push({ status: 503 }, { status: 503 }, { status: 404 });
    await revoker().handle(target as PermissionPod);
    assert.equal(revokeCalls("uid-flaky").length, 1);
    assert.deepEqual(finalizers("flaky"), [OTHER_FINALIZER, POD_PERMISSION_FINALIZER]);

    assert.deepEqual(scheduled, [1000]);
    timers.tick(999);
    assert.equal(api.seen("GET", /\/pods\/flaky$/).length, 0, "not before 1 s");
    timers.tick(1);
    await retryScheduled(2);
    assert.equal(revokeCalls("uid-flaky").length, 2);
    assert.equal(api.seen("GET", /\/namespaces\/shop\/pods\/flaky$/).length, 1, "a fresh read");
    assert.deepEqual(scheduled, [1000, 2000]);

    timers.tick(1999);
    assert.equal(revokeCalls("uid-flaky").length, 2, "the second retry waits 2 s");
    timers.tick(1);
    await waitUntil("the Event of the release", () => events("flaky").length === 3);
    assert.deepEqual(finalizers("flaky"), [OTHER_FINALIZER]);
    assert.equal(revokeCalls("uid-flaky").length, 3);
    assert.deepEqual(events("flaky"), [
      "Warning RevokeFailed: permission server answered 503 {}",
      "Warning RevokeFailed: permission server answered 503 {}",
      "Normal Revoked: nothing was granted to this pod",
    ]);
  });

  it("given a server that never answers well, retries until the deadline, then removes the finalizer without revoking", async () => {
    const target = api.put("/api/v1", "pods", pod("stuck", { ip: "10.0.0.3" }));
    const r = revoker();
    await r.handle(target as PermissionPod);
    // Retries at 1 s and 3 s (the backoff doubling); the one at 7 s is past the 5 s deadline.
    for (const [waitMs, calls] of [
      [1000, 2],
      [2000, 3],
    ] as const) {
      await retryScheduled(calls - 1);
      timers.tick(waitMs);
      await waitUntil(`revoke call ${calls}`, () => revokeCalls("uid-stuck").length === calls);
    }
    await retryScheduled(3);
    assert.deepEqual(scheduled, [1000, 2000, 4000]);
    timers.tick(4000);
    await waitUntil("the Event of the release", () => events("stuck").length === 4);
    assert.deepEqual(finalizers("stuck"), [OTHER_FINALIZER]);
    assert.equal(revokeCalls("uid-stuck").length, 3, "no call past the deadline");
    const last = events("stuck").at(-1) ?? "";
    assert.match(last, /^Warning RevokeAbandoned: finalizer removed without revoking: /);
    assert.match(last, /within 5s of the deletionTimestamp/);
  });

  it("given the finalizer list changed under it, re-reads the pod after the backoff and releases then", async () => {
    const target = api.put("/api/v1", "pods", pod("moved", { ip: "10.0.0.4" }));
    revokeAnswers.push({ status: 200, body: { revoked: ["orders"], ips: ["10.0.0.4"] } });
    revokeAnswers.push({ status: 200, body: { revoked: [], ips: ["10.0.0.4"] } });
    api.fail("PATCH", /\/pods\/moved$/, 422);
    await revoker().handle(target as PermissionPod);
    assert.deepEqual(finalizers("moved"), [OTHER_FINALIZER, POD_PERMISSION_FINALIZER]);
    assert.deepEqual(scheduled, [1000]);
    timers.tick(1000);
    await waitUntil("the Event of the release", () => events("moved").length === 1);
    assert.deepEqual(finalizers("moved"), [OTHER_FINALIZER]);
    assert.equal(revokeCalls("uid-moved").length, 2, "revoked again: the server is idempotent");
    assert.deepEqual(events("moved"), ["Normal Revoked: revoked nothing for 10.0.0.4"]);
  });

  it("given a pod that never had an IP, releases it without asking the server", async () => {
    const target = api.put("/api/v1", "pods", pod("no-ip"));
    await revoker().handle(target as PermissionPod);
    assert.deepEqual(revokeCalls("uid-no-ip"), []);
    assert.deepEqual(finalizers("no-ip"), [OTHER_FINALIZER]);
    assert.deepEqual(events("no-ip"), [
      "Normal Released: finalizer removed: never had an IP: nothing granted",
    ]);
  });

  it("given a sweep, re-reads the terminating pods the watch showed, and only those", async () => {
    const held = api.put("/api/v1", "pods", pod("held", { ip: "10.0.0.5" })) as PermissionPod;
    const running = api.put("/api/v1", "pods", pod("running", { ip: "10.0.0.6", deleting: false }));
    api.put("/api/v1", "pods", pod("unseen", { ip: "10.0.0.7" }));
    const gone = pod("gone", { ip: "10.0.0.8" }) as PermissionPod;
    const subject = revoker();
    // The watch shows "held" and "gone" terminating while the server fails: each is retried later.
    revokeAnswers.push({ status: 503 }, { status: 503 });
    await subject.observe(held, false);
    await subject.observe(running as PermissionPod, false);
    await subject.observe(gone, false);
    assert.equal(revokeCalls("uid-held").length, 1);
    assert.deepEqual(finalizers("held"), [OTHER_FINALIZER, POD_PERMISSION_FINALIZER]);

    // The sweep reads "held" (released now that the server answers) and "gone" (not found:
    // forgotten), nothing else: not the running pod, not a pod the watch never showed.
    revokeAnswers.push({ status: 200, body: { revoked: ["orders"], ips: ["10.0.0.5"] } });
    const reads = api.seen("GET", /\/pods\//).length;
    await subject.sweep();
    const read = api
      .seen("GET", /\/pods\//)
      .slice(reads)
      .map(r => r.path)
      .sort();
    assert.deepEqual(read, [
      "/api/v1/namespaces/shop/pods/gone",
      "/api/v1/namespaces/shop/pods/held",
    ]);
    assert.deepEqual(finalizers("held"), [OTHER_FINALIZER]);
    assert.deepEqual(finalizers("unseen"), [OTHER_FINALIZER, POD_PERMISSION_FINALIZER]);

    // Released and its removal seen: the next sweep reads nothing.
    await subject.observe(held, true);
    const after = api.seen("GET", /\/pods\//).length;
    await subject.sweep();
    assert.equal(api.seen("GET", /\/pods\//).length, after);
  });

  it("follows Bulwark's pods: the label with any value, or our finalizer whatever the labels", () => {
    const withMeta = (metadata: Record<string, unknown>) => ({ metadata });
    assert.ok(isPermissionPod(withMeta({ labels: { [PERMISSION_MANAGED_LABEL]: "true" } })));
    // A value an administrator changed still counts.
    assert.ok(isPermissionPod(withMeta({ labels: { [PERMISSION_MANAGED_LABEL]: "no" } })));
    // The label removed while our finalizer holds the pod: still ours until released.
    assert.ok(
      isPermissionPod(withMeta({ finalizers: [OTHER_FINALIZER, POD_PERMISSION_FINALIZER] })),
    );
    assert.ok(
      !isPermissionPod(withMeta({ labels: { app: "web" }, finalizers: [OTHER_FINALIZER] })),
    );
    assert.ok(!isPermissionPod({}));
  });
});
