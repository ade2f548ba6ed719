// The gateway controller's timing: the debounce that gathers a burst into one view, the retry
// after the data plane refused one, the stamps of a good view, and the recheck when the
// checksum grace period ends. Its clock is node:test's mock timers (setTimeout and Date); its
// data plane, metrics, log and source are fakes of what it is given (the source's cache is the
// real ObjectCache, filled through the sink the reflectors use).
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Ingress, V1IngressClass } from "@kubernetes/client-node";
import { computeChecksum } from "../core/checksum";
import type { ChecksumObject } from "../core/checksum/crd";
import type { Ingress } from "../core/ingress/types";
import { INGRESS_CLASS, INGRESS_CONTROLLER } from "../core/names";
import { waitUntil } from "../test/harness/wait";
import { gatewayMetrics } from "./admin/metrics";
import { GatewayController, type ControllerOptions } from "./controller";
import { ingress } from "./routing/testkit";
import { ObjectCache, RESOURCE_KINDS, type ResourceKind } from "./source/cache";
import type { KubeObject } from "../kube/reflector";
import type { Source } from "./source/source";
import { readLastGood } from "./state/last-good";
import type { GatewayView } from "./view";

const T0 = Date.parse("2030-06-01T12:00:00.000Z");
const DEBOUNCE_MS = 100;
const VERSION = "nginx.ingress.kubernetes.io/version";

const ingressClass: V1IngressClass = {
  metadata: { name: INGRESS_CLASS, resourceVersion: "1" },
  spec: { controller: INGRESS_CONTROLLER },
};

function site(name: string, version: string): V1Ingress {
  const object = ingress({
    namespace: "shop",
    name,
    annotations: { [VERSION]: version },
    rules: [{ host: `${name}.example.com`, paths: [{ path: "/", service: name }] }],
  });
  object.metadata = { ...object.metadata, resourceVersion: `${name}-${version}` };
  return object;
}

function attestation(name: string, createdMs: number, objects: V1Ingress[]): ChecksumObject {
  const { checksum, ids } = computeChecksum("Ingress", "tengine", objects as Ingress[]);
  const created = new Date(createdMs).toISOString();
  return {
    metadata: { name, namespace: "guard", resourceVersion: name, creationTimestamp: created },
    spec: { timestamp: created, checksum, ids, mode: "tengine" },
  } as ChecksumObject;
}

/** Lets the promises a fired timer started run on (the fakes wait on no timer). */
const settle = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

function gateway(options: Partial<ControllerOptions> = {}, stateDir?: string) {
  const dir = stateDir ?? mkdtempSync(join(tmpdir(), "gw-controller-"));
  const applied: GatewayView[] = [];
  const logs: { level: string; message: string }[] = [];
  let refusals = 0;
  const metrics = gatewayMetrics();
  const controller = new GatewayController({
    podName: "bulwark-gateway-0",
    ordinal: 0,
    stateDir: dir,
    checksum: { ingress: "off", secret: "off" },
    excludedNamespaces: new Set(),
    ingressReferrers: new Set(),
    dataPlane: {
      apply: async view => {
        if (refusals > 0) {
          refusals--;
          throw new Error("no worker took the view");
        }
        applied.push(view);
        return { version: view.version, problems: [] };
      },
      status: () => ({}) as ReturnType<ControllerOptions["dataPlane"]["status"]>,
    },
    metrics,
    log: (level, message) => logs.push({ level, message }),
    debounceMs: DEBOUNCE_MS,
    ...options,
  });
  const cache = new ObjectCache(change => controller.onChange(change));
  const synced = new Set<ResourceKind>(RESOURCE_KINDS);
  const source = {
    cache,
    kindSynced: (kind: ResourceKind) => synced.has(kind),
    status: () => ({ reachable: true, resources: [] }),
  } as unknown as Source;
  return {
    dir,
    applied,
    logs,
    metrics,
    controller,
    synced,
    attach: () => controller.attach(source),
    put: (kind: ResourceKind, object: KubeObject | V1Ingress | V1IngressClass | ChecksumObject) =>
      cache.sink(kind, undefined).upsert(object as KubeObject),
    refuseNext: () => void refusals++,
    health: () =>
      controller.health() as {
        view?: { version: number; from: string; goodAt: string; ingresses: number };
        guard: Record<string, { state: string; accepted: boolean; refusedUpdates: number }>;
      },
    /** Stops it; the last-good writer may be waiting out its interval on the mocked clock. */
    close: async () => {
      let stopped = false;
      void controller.stop().then(() => (stopped = true));
      await waitUntil("the controller to stop", async () => {
        mock.timers.tick(1000);
        await settle();
        return stopped;
      });
      if (!stateDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("GatewayController on mock timers", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "Date"], now: T0 }));
  afterEach(() => mock.timers.reset());

  it("given a burst of changes, serves one view when the debounce ends, not before", async () => {
    const g = gateway();
    g.attach();
    g.put("ingressClass", ingressClass);
    g.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS / 2);
    g.put("ingress", site("b", "1"));
    mock.timers.tick(DEBOUNCE_MS / 2 - 1);
    await settle();
    assert.equal(g.applied.length, 0, "the debounce runs from the first change");
    assert.equal(g.controller.ready(), false);
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(
      g.applied.map(v => [v.version, v.ingresses.map(i => i.metadata?.name)]),
      [[1, ["a", "b"]]],
    );
    assert.equal(g.controller.ready(), true);
    await g.close();
  });

  it("given a relist that changes nothing, applies nothing; a changed object, the next version", async () => {
    const g = gateway();
    g.attach();
    g.put("ingressClass", ingressClass);
    g.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    g.controller.onListed();
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.equal(g.applied.length, 1, "the same view is not applied again");
    g.put("ingress", site("a", "2"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.deepEqual(
      g.applied.map(v => v.version),
      [1, 2],
    );
    await g.close();
  });

  it("given a kind not listed yet, composes nothing until it is", async () => {
    const g = gateway();
    g.synced.delete("checksumKeys");
    g.attach();
    g.put("ingressClass", ingressClass);
    g.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.equal(g.applied.length, 0);
    assert.equal(g.health().view, undefined);
    g.synced.add("checksumKeys");
    g.controller.onListed();
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.equal(g.applied.length, 1);
    await g.close();
  });

  it("given the data plane refusing a view, logs it and tries again a second later", async () => {
    const g = gateway();
    g.attach();
    g.refuseNext();
    g.put("ingressClass", ingressClass);
    g.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.deepEqual(
      g.logs.filter(l => l.level === "error").map(l => l.message),
      ["could not apply the view; retrying"],
    );
    assert.equal(g.controller.ready(), false);
    // Mock timers run a callback at the end of its tick: tick to each deadline exactly.
    mock.timers.tick(999);
    await settle();
    mock.timers.tick(1);
    mock.timers.tick(DEBOUNCE_MS - 1);
    await settle();
    assert.equal(g.applied.length, 0, "the retry waits a second, then the debounce");
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(
      g.applied.map(v => v.version),
      [1],
    );
    assert.equal(g.controller.ready(), true);
    await g.close();
  });

  it("given a good view, stamps it with the clock's time in /healthz, the metric and the saved file", async () => {
    const g = gateway();
    g.attach();
    mock.timers.tick(5000);
    g.put("ingressClass", ingressClass);
    g.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    const goodAt = new Date(T0 + 5000 + DEBOUNCE_MS).toISOString();
    assert.equal(g.health().view?.goodAt, goodAt);
    const stamp = (await g.metrics.lastGoodTimestamp.get()).values[0]?.value;
    assert.equal(stamp, Date.parse(goodAt) / 1000);
    const saved = await waitUntil("the view on disk", () => readLastGood(g.dir));
    assert.deepEqual(
      [saved.version, saved.goodAt, saved.podName],
      [1, goodAt, "bulwark-gateway-0"],
    );
    await g.close();
  });

  it("given a newer checksum that attests nothing served, keeps trusting the previous one for the grace period, then refuses", async () => {
    const g = gateway({ checksum: { ingress: "enforce", secret: "off" }, checksumGraceMs: 4000 });
    g.attach();
    const current = site("site-1", "3");
    g.put("ingressClass", ingressClass);
    g.put("ingress", current);
    g.put("ingressChecksum", attestation("checksum-3", T0, [current]));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.equal(g.health().guard.ingress?.state, "matched");
    assert.equal(g.applied.length, 1);

    // Version 4 is attested one second later but never lands.
    mock.timers.tick(1000 - DEBOUNCE_MS);
    g.put("ingressChecksum", attestation("checksum-4", T0 + 1000, [site("site-1", "4")]));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    assert.equal(g.health().guard.ingress?.state, "matched", "checksum-3 counts for 4 s more");

    // The grace period ends at T0 + 5 s; the controller looks again 10 ms later, with no change.
    mock.timers.tick(T0 + 5000 + 10 - Date.now() - 1);
    await settle();
    assert.equal(g.health().guard.ingress?.state, "matched");
    mock.timers.tick(1);
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    const guard = g.health().guard.ingress;
    assert.deepEqual(
      [guard?.state, guard?.accepted, guard?.refusedUpdates],
      ["mismatch", false, 1],
    );
    assert.equal(g.applied.length, 1, "the last good view keeps serving");
    const mismatch = (await g.metrics.checksumMismatch.get()).values.find(
      v => v.labels.kind === "ingress",
    );
    assert.equal(mismatch?.value, 1);
    await g.close();
  });

  it("given a saved view, serves it from disk at start, then the API's view as the next version", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-controller-"));
    const first = gateway({}, dir);
    first.attach();
    first.put("ingressClass", ingressClass);
    first.put("ingress", site("a", "1"));
    mock.timers.tick(DEBOUNCE_MS);
    await settle();
    await first.close();

    const restarted = gateway({}, dir);
    try {
      await restarted.controller.restore();
      assert.equal(restarted.health().view?.from, "disk");
      assert.deepEqual(
        restarted.applied.map(v => v.version),
        [1],
      );
      restarted.attach();
      restarted.put("ingressClass", ingressClass);
      restarted.put("ingress", site("a", "1"));
      mock.timers.tick(DEBOUNCE_MS);
      await settle();
      assert.deepEqual(
        restarted.applied.map(v => v.version),
        [1, 2],
        "the API's view follows the saved one's version",
      );
      assert.equal(restarted.health().view?.from, "api");
      await restarted.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
