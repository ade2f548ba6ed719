// The consistency reconciler's timing: the first pass after its list, the debounce that turns a
// burst of watch events into one pass, the status write retried with a doubling wait up to
// maxRetryMs, and the pass when the previous checksum object stops counting. consistency.ts
// reaches the cluster through Pepr's K8s (KUBECONFIG, read on every call), so the cluster is a
// stand-in (test/harness/kube-stand-in.ts); timers and Date run on node:test mock timers. A
// pass shows at once in the verify-duration histogram (observed before the first write), so
// "no pass yet" needs no wait.
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
import { K8s, kind, Log } from "pepr";
import { computeChecksum } from "../../core/checksum";
import type { Ingress } from "../../core/ingress/types";
import { KubeStandIn, type StandInObject } from "../../test/harness/kube-stand-in";
import { waitUntil } from "../../test/harness/wait";
import { ConsistencyGuard, type GuardOptions } from "./consistency";
import { guardMetrics } from "./metrics";

const T0 = Date.parse("2031-05-01T08:00:00.000Z");
const DEBOUNCE_MS = 200;
const PUBLISHERS = "bulwark-system";
const INGRESSES = ["/apis/networking.k8s.io/v1", "ingresses"] as const;
const CHECKSUMS = ["/apis/tengine.taobao.org/v1", "ingresschecksums"] as const;

function site(version: string): Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      namespace: "shop",
      name: "site-1",
      resourceVersion: `v${version}`,
      annotations: { "nginx.ingress.kubernetes.io/version": version },
    },
    spec: { ingressClassName: "bulwark", rules: [{ host: "site-1.example.com" }] },
  } as Ingress;
}

function attestation(name: string, createdMs: number, objects: Ingress[], namespace = PUBLISHERS) {
  const { checksum, ids } = computeChecksum("Ingress", "tengine", objects);
  const created = new Date(createdMs).toISOString();
  return {
    apiVersion: "tengine.taobao.org/v1",
    kind: "IngressCheckSum",
    metadata: { namespace, name, generation: 1, creationTimestamp: created },
    spec: { timestamp: created, checksum, ids, mode: "tengine" },
  } as StandInObject;
}

/** Status passes over the kind so far: each observes the verify duration once, synchronously. */
async function passes(kind: "ingress" | "secret"): Promise<number> {
  const metric = await guardMetrics.verifyDuration.get();
  return (
    metric.values.find(v => v.metricName?.endsWith("_count") && v.labels.kind === kind)?.value ?? 0
  );
}

async function consistentGauge(): Promise<number | undefined> {
  return (await guardMetrics.consistent.get()).values.find(v => v.labels.kind === "ingress")?.value;
}

describe("ConsistencyGuard against a stand-in API, on mock timers", () => {
  let api: KubeStandIn;
  const kubeconfig = process.env.KUBECONFIG;
  let retries: number[];
  let timers: MockTimers;

  before(async () => {
    // The API client's HTTP library (undici) keeps one timer for all its timeouts and refreshes
    // it forever after; made under mock timers, its refreshes would land in a later test's mock
    // queue. Make it now, on the real clock, with one call.
    const warmUp = await KubeStandIn.start();
    process.env.KUBECONFIG = warmUp.kubeconfig();
    await K8s(kind.Namespace).Get();
    await warmUp.close();
  });

  after(() => {
    process.env.KUBECONFIG = kubeconfig;
  });

  beforeEach(async t => {
    api = await KubeStandIn.start();
    process.env.KUBECONFIG = api.kubeconfig();
    retries = [];
    // This test's own mock timers (a fresh queue each test), undone when it ends.
    const { mock } = t as TestContext; // beforeEach runs per test: its context is the test's
    timers = mock.timers;
    timers.enable({ apis: ["setTimeout", "Date"], now: T0 });
    mock.method(Log, "warn", (fields: { retryMs?: number }, message: string) => {
      if (message === "could not write checksum status; retrying")
        retries.push(fields.retryMs ?? -1);
    });
  });

  afterEach(async () => {
    await api.close();
  });

  /** site-1 at version 1, attested by "first" a minute ago. */
  function seed(): void {
    api.put(...INGRESSES, site("1") as StandInObject);
    api.put(...CHECKSUMS, attestation("first", T0 - 60_000, [site("1")]));
  }

  /**
   * A guard whose first list has been made and whose first pass has ended: that pass goes over
   * Ingresses (writing their statuses) and then Secrets, so the Secrets' pass starting means the
   * Ingresses' writes are done, and what the pass schedules at its end is scheduled.
   */
  async function primed(options: Partial<GuardOptions> = {}): Promise<ConsistencyGuard> {
    const guard = new ConsistencyGuard({ debounceMs: DEBOUNCE_MS, maxRetryMs: 30_000, ...options });
    const before = await passes("secret");
    guard.start();
    // The list is real I/O; its pass is scheduled at once (0 ms) once it is in.
    await waitUntil("the first pass after the list", async () => {
      timers.tick(1);
      return (await passes("secret")) > before;
    });
    await new Promise(resolve => setImmediate(resolve));
    return guard;
  }

  const statusPatches = (name: string) =>
    api.seen("PATCH", new RegExp(`/ingresschecksums/${name}/status$`));
  const events = (name: string) =>
    api
      .created("events")
      .filter(e => (e.involvedObject as { name?: string } | undefined)?.name === name)
      .map(e => `${String(e.type)} ${String(e.reason)}`);
  const consistent = (name: string) =>
    (
      api.get(...CHECKSUMS, PUBLISHERS, name)?.status as
        | { conditions?: { type: string; status: string }[] }
        | undefined
    )?.conditions?.find(c => c.type === "Consistent")?.status;

  it("given a matching checksum object, writes its status after the first list and says Consistent once; one outside the publishers is only announced", async () => {
    seed();
    api.put(...CHECKSUMS, attestation("stray", T0, [site("1")], "shop"));
    await primed();
    await waitUntil("the Consistent Event", () => events("first").length === 1);
    assert.equal(consistent("first"), "True");
    assert.deepEqual(events("first"), ["Normal ChecksumMatched"]);
    assert.deepEqual(events("stray"), ["Warning UntrustedPublisher"]);
    assert.deepEqual(api.seen("PATCH", /\/stray\/status$/), []);
    assert.equal(await consistentGauge(), 1);
  });

  it("lists only TLS Secrets: the only ones the checksum counts", async () => {
    seed();
    await primed();
    const lists = api.seen("GET", /^\/api\/v1\/secrets$/);
    assert.equal(lists.length, 1);
    assert.equal(lists[0]!.query.get("fieldSelector"), "type=kubernetes.io/tls");
  });

  it("given a burst of changes, makes one pass the debounce after the last of them", async () => {
    seed();
    const guard = await primed();
    const before = await passes("ingress");
    guard.onObject("ingress", site("2"), false);
    timers.tick(DEBOUNCE_MS / 2);
    guard.onObject("ingress", site("3"), false);
    timers.tick(DEBOUNCE_MS - 1);
    assert.equal(await passes("ingress"), before, "the last change restarted the wait");
    timers.tick(1);
    assert.equal(await passes("ingress"), before + 1, "one pass for the burst");
    await waitUntil("the mismatch Event", () => events("first").length === 2);
    assert.equal(consistent("first"), "False");
    assert.deepEqual(events("first").at(-1), "Warning ChecksumMismatch");
    assert.equal(await consistentGauge(), 0);
  });

  it("given status writes that fail, retries after 500 ms, 1 s, then the cap, and starts again at 500 ms after a success", async () => {
    seed();
    const guard = await primed({ maxRetryMs: 1500 });
    api.fail("PATCH", /\/ingresschecksums\/first\/status$/, 503, 3);
    guard.onObject("ingress", site("2"), false);
    timers.tick(DEBOUNCE_MS);
    for (const [failed, waitMs] of [
      [1, 500],
      [2, 1000],
      [3, 1500],
    ] as const) {
      await waitUntil(`failure ${failed} to be retried`, () => retries.length === failed);
      assert.equal(retries.at(-1), waitMs);
      const before = await passes("ingress");
      timers.tick(waitMs - 1);
      assert.equal(await passes("ingress"), before, `not before ${waitMs} ms`);
      timers.tick(1);
      assert.equal(await passes("ingress"), before + 1);
    }
    await waitUntil("the write to go through", () => consistent("first") === "False");
    assert.equal(statusPatches("first").length, 1 + 4, "the first pass's, three failed, one good");

    api.fail("PATCH", /\/ingresschecksums\/first\/status$/, 503, 1);
    guard.onObject("ingress", site("1"), false);
    // The good write's pass may still be announcing it: a change then waits one more debounce.
    await waitUntil("the next failure to be retried", () => {
      timers.tick(DEBOUNCE_MS);
      return retries.length === 4;
    });
    assert.equal(retries[3], 500, "the doubling restarted after the success");
  });

  it("given a newer checksum object, counts the previous one for the grace period, then passes again with no event", async () => {
    seed();
    api.put(...CHECKSUMS, attestation("second", T0, [site("2")]));
    await primed({ graceMs: 4000 });
    assert.equal(await consistentGauge(), 1, "the previous object still counts");
    const before = await passes("ingress");
    // The window closes at T0 + 4 s; the guard looks 10 ms later, then waits its debounce.
    timers.tick(T0 + 4010 - Date.now() - 1);
    assert.equal(await passes("ingress"), before);
    timers.tick(1);
    timers.tick(DEBOUNCE_MS);
    assert.equal(await passes("ingress"), before + 1);
    assert.equal(await consistentGauge(), 0, "only the newest counts now, and it differs");
  });
});
