import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { computeChecksum, idFunction, type IdFunction } from "./compute";
import { checksumOfIds } from "./id-set";
import type { IngressLike } from "./objects";
import { ChecksumTracker, type PublishedChecksum } from "./tracker";

const VERSION = "nginx.ingress.kubernetes.io/version";

const ingress = (n: number, version = 1, namespace = "web"): IngressLike => ({
  metadata: { name: `site-${n}`, namespace, annotations: { [VERSION]: String(version) } },
  spec: { rules: [{ host: `site-${n}.example` }] },
});

/** A tracker of `count` Ingresses keyed web/site-<n>, IDs "<n>-1". */
function trackerOf(count: number, idFunction?: IdFunction<"Ingress">): ChecksumTracker<"Ingress"> {
  const tracker = new ChecksumTracker("Ingress", "tengine", { idFunction });
  for (let n = 1; n <= count; n++) tracker.upsert(`web/site-${n}`, ingress(n));
  return tracker;
}

function publication(
  tracker: ChecksumTracker<"Ingress">,
  name: string,
  order: string,
): PublishedChecksum {
  const ids = tracker.ids();
  return { name, checksum: checksumOfIds(ids, tracker.mode), ids, order };
}

describe("ChecksumTracker", () => {
  it("given nothing published, returns inconsistent with no report", () => {
    assert.deepEqual(trackerOf(3).verify(), { consistent: false });
  });

  it("given a publication of the current IDs, returns consistent", () => {
    const tracker = trackerOf(50);
    tracker.publish(publication(tracker, "cs-1", "2025-01-01T00:00:00Z"));
    assert.deepEqual(tracker.verify(), {
      consistent: true,
      matched: "cs-1",
      newest: { name: "cs-1", checksum: tracker.checksum(), matches: true, idsMatchChecksum: true },
    });
  });

  it("given one change, then its revert, returns inconsistent with the IDs that differ, then consistent", () => {
    const tracker = trackerOf(50);
    tracker.publish(publication(tracker, "cs-1", "t1"));
    tracker.upsert("web/site-7", ingress(7, 2));
    const changed = tracker.verify();
    assert.equal(changed.consistent, false);
    assert.equal(changed.matched, undefined);
    assert.deepEqual(changed.newest?.diff, {
      missing: ["7-1"],
      unexpected: ["7-2"],
      missingTotal: 1,
      unexpectedTotal: 1,
    });
    tracker.upsert("web/site-7", ingress(7, 1));
    assert.equal(tracker.verify().consistent, true);
    assert.equal(tracker.verify().newest?.diff, undefined);
  });

  it("given a removed object, returns it as missing until it is back", () => {
    const tracker = trackerOf(10);
    tracker.publish(publication(tracker, "cs-1", "t1"));
    assert.equal(tracker.remove("web/site-3"), true);
    assert.equal(tracker.remove("web/site-3"), false);
    assert.equal(tracker.size, 9);
    assert.deepEqual(tracker.verify().newest?.diff?.missing, ["3-1"]);
    tracker.upsert("web/site-3", ingress(3));
    assert.equal(tracker.verify().consistent, true);
  });

  it("given two objects with one ID, counts it twice", () => {
    const tracker = trackerOf(2);
    tracker.publish(publication(tracker, "cs-1", "t1"));
    tracker.upsert("edge/site-2", ingress(2, 1, "edge"));
    assert.deepEqual(tracker.ids(), ["1-1", "2-1", "2-1"]);
    assert.deepEqual(tracker.verify().newest?.diff?.unexpected, ["2-1"]);
  });

  it("given several publications, returns consistent when ANY matches and reports the newest", () => {
    const tracker = trackerOf(20);
    const before = publication(tracker, "cs-old", "2025-01-01T00:00:00Z");
    tracker.upsert("web/site-4", ingress(4, 2));
    const after = publication(tracker, "cs-new", "2025-01-02T00:00:00Z");
    tracker.publish(after);
    tracker.publish(before);

    const now = tracker.verify();
    assert.equal(now.consistent, true);
    assert.equal(now.matched, "cs-new");
    assert.equal(now.newest?.name, "cs-new");

    tracker.upsert("web/site-4", ingress(4, 1));
    const reverted = tracker.verify();
    assert.equal(reverted.consistent, true);
    assert.equal(reverted.matched, "cs-old");
    assert.equal(reverted.newest?.matches, false);
    assert.deepEqual(reverted.newest?.diff?.missing, ["4-2"]);

    assert.equal(tracker.unpublish("cs-old"), true);
    assert.equal(tracker.unpublish("cs-old"), false);
    assert.equal(tracker.verify().consistent, false);
  });

  it("given ids that do not hash to their checksum, never matches through the ids and says so", () => {
    const tracker = trackerOf(10);
    tracker.publish({ name: "cs-bad", checksum: "0".repeat(32), ids: tracker.ids(), order: "t1" });
    const result = tracker.verify();
    assert.equal(result.consistent, false);
    assert.equal(result.newest?.idsMatchChecksum, false);
    assert.equal(result.newest?.diff, undefined);
  });

  it("given ids that do not hash to a checksum that does match, returns consistent as Tengine does, and the diff", () => {
    const tracker = trackerOf(10);
    const ids = tracker.ids().slice(1);
    tracker.publish({ name: "cs-sloppy", checksum: tracker.checksum(), ids, order: "t1" });
    const result = tracker.verify();
    assert.equal(result.consistent, true);
    assert.equal(result.newest?.idsMatchChecksum, false);
    assert.deepEqual(result.newest?.diff?.unexpected, ["1-1"]);
  });

  it("given a publication without ids, falls back to the MD5 of the current IDs", () => {
    const tracker = trackerOf(30);
    tracker.publish({ name: "cs-tengine", checksum: tracker.checksum(), order: "t1" });
    assert.equal(tracker.verify().consistent, true);
    tracker.upsert("web/site-9", ingress(9, 3));
    const changed = tracker.verify();
    assert.equal(changed.consistent, false);
    assert.deepEqual(changed.newest, {
      name: "cs-tengine",
      checksum: changed.newest?.checksum,
      matches: false,
      idsMatchChecksum: undefined,
    });
    tracker.upsert("web/site-9", ingress(9, 1));
    assert.equal(tracker.verify().consistent, true);
  });

  it("given a publication republished unchanged or replaced, keeps or recomputes its state", () => {
    const tracker = trackerOf(5);
    const first = publication(tracker, "cs-1", "t1");
    tracker.publish(first);
    tracker.publish({ ...first, ids: [...(first.ids ?? [])], order: "t2" });
    assert.equal(tracker.verify().consistent, true);
    tracker.publish({ ...first, checksum: checksumOfIds(["1-1"], tracker.mode), ids: ["1-1"] });
    assert.equal(tracker.verify().newest?.diff?.unexpectedTotal, 4);
  });

  it("given more differences than the limit, returns the first ones sorted and the full counts", () => {
    const tracker = new ChecksumTracker("Ingress", "tengine", { diffLimit: 3 });
    for (let n = 1; n <= 40; n++) tracker.upsert(`web/site-${n}`, ingress(n));
    tracker.publish(publication(trackerOf(40), "cs-1", "t1"));
    for (let n = 11; n <= 40; n++) tracker.upsert(`web/site-${n}`, ingress(n, 2));
    assert.deepEqual(tracker.verify().newest?.diff, {
      missing: ["11-1", "12-1", "13-1"],
      unexpected: ["11-2", "12-2", "13-2"],
      missingTotal: 30,
      unexpectedTotal: 30,
    });
  });

  it("given objects without an ID, lists them as skipped until they get one", () => {
    const tracker = trackerOf(2);
    tracker.upsert("web/plain", { metadata: { name: "plain", namespace: "web" } });
    assert.deepEqual(tracker.skipped(), [
      {
        key: "web/plain",
        reason: `no ${VERSION} annotation; name does not end in "-<integer>": "plain"`,
      },
    ]);
    assert.equal(tracker.size, 3);
    assert.deepEqual(tracker.ids(), ["1-1", "2-1"]);
    tracker.upsert("web/plain", ingress(99));
    assert.deepEqual(tracker.skipped(), []);
    tracker.remove("web/plain");
    assert.deepEqual(tracker.ids(), ["1-1", "2-1"]);
  });

  it("given a long run of changes between reads, returns what a full recomputation returns", () => {
    const tracker = new ChecksumTracker("Ingress", "content");
    const current = new Map<string, IngressLike>();
    let state = 42;
    const next = (limit: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % limit;
    };
    for (let step = 0; step < 3000; step++) {
      const key = `web/site-${next(200)}`;
      if (next(4) === 0) {
        tracker.remove(key);
        current.delete(key);
      } else {
        const object = ingress(next(200), 1 + next(3));
        tracker.upsert(key, object);
        current.set(key, object);
      }
      // Frequent reads first (in-order insertion), then 2,000 changes unread (a fresh sort).
      if ((step < 1000 && next(50) === 0) || step === 2999) {
        const full = computeChecksum("Ingress", "content", current.values());
        assert.deepEqual(tracker.ids(), full.ids);
        assert.equal(tracker.checksum(), full.checksum);
      }
    }
  });

  it("given a named publication, returns its own report, or undefined for an unknown name", () => {
    const tracker = trackerOf(10);
    const old = publication(tracker, "cs-old", "t1");
    tracker.upsert("web/site-2", ingress(2, 2));
    tracker.publish(old);
    tracker.publish(publication(tracker, "cs-new", "t2"));
    assert.equal(tracker.report("cs-new")?.matches, true);
    assert.deepEqual(tracker.report("cs-old")?.diff?.unexpected, ["2-2"]);
    assert.equal(tracker.report("cs-none"), undefined);
  });

  it("given skipped objects, counts only the IDs in idCount", () => {
    const tracker = trackerOf(3);
    tracker.upsert("web/plain", { metadata: { name: "plain", namespace: "web" } });
    assert.equal(tracker.size, 4);
    assert.equal(tracker.idCount, 3);
  });

  it("given one change among 1,000 objects, computes one ID, not 1,000", () => {
    let calls = 0;
    const counted: IdFunction<"Ingress"> = object => {
      calls++;
      return idFunction("Ingress", "tengine")(object);
    };
    const tracker = trackerOf(1000, counted);
    tracker.publish(publication(tracker, "cs-ids", "t2"));
    tracker.publish({ name: "cs-no-ids", checksum: tracker.checksum(), order: "t1" });
    assert.equal(tracker.verify().consistent, true);
    assert.equal(calls, 1000);

    tracker.upsert("web/site-500", ingress(500, 2));
    assert.equal(tracker.verify().consistent, false);
    assert.equal(calls, 1001);

    tracker.upsert("web/site-500", ingress(500, 1));
    assert.equal(tracker.verify().consistent, true);
    assert.equal(calls, 1002);
  });
});

describe("ChecksumTracker.keysWithIds", () => {
  it("names the objects behind IDs, sorted and capped; nothing for no IDs", () => {
    const tracker = new ChecksumTracker("Ingress", "tengine");
    const object = (name: string, version: string) => ({
      metadata: { name, annotations: { "nginx.ingress.kubernetes.io/version": version } },
    });
    tracker.upsert("b/shop-7", object("shop-7", "3"));
    tracker.upsert("a/shop-7", object("shop-7", "3"));
    tracker.upsert("c/shop-8", object("shop-8", "1"));
    tracker.upsert("d/no-version", { metadata: { name: "no-version" } });
    assert.deepEqual(tracker.keysWithIds(["7-3"]), ["a/shop-7", "b/shop-7"]);
    assert.deepEqual(tracker.keysWithIds(["7-3", "8-1"], 2), ["a/shop-7", "b/shop-7"]);
    assert.deepEqual(tracker.keysWithIds([]), []);
    assert.deepEqual(tracker.keysWithIds(["9-9"]), []);
  });
});
