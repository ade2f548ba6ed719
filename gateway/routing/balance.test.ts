import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decayEwma, EWMA_DECAY_MS, EwmaStats, HashChooser, HashRing, subsetsOf } from "./balance";
import { Backend, type Endpoint } from "./table";

const endpointKeys = (count: number) =>
  Array.from({ length: count }, (_, i) => `10.0.0.${i + 1}:8080`);
const requestKeys = Array.from({ length: 5000 }, (_, i) => `/item/${i}?user=${(i * 7919) % 1013}`);

/** A seeded random source, so a test's picks are the same every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe("HashRing", () => {
  it("sends the same key to the same endpoint every time, for a ring built anew too", () => {
    const ids = endpointKeys(5);
    const ring = new HashRing(ids);
    const again = new HashRing([...ids]);
    for (const key of requestKeys) assert.equal(ring.find(key), again.find(key));
  });

  it("spreads many keys over every endpoint, none with more than twice its share", () => {
    const ids = endpointKeys(5);
    const ring = new HashRing(ids);
    const counts = new Array<number>(ids.length).fill(0);
    for (const key of requestKeys) counts[ring.find(key)]!++;
    const share = requestKeys.length / ids.length;
    for (const count of counts) assert.ok(count > share / 2 && count < share * 2, `${counts}`);
  });

  it("when one endpoint leaves, moves only the keys it owned", () => {
    const ids = endpointKeys(6);
    const before = new HashRing(ids);
    const gone = ids[2]!;
    const left = ids.filter(id => id !== gone);
    const after = new HashRing(left);
    let moved = 0;
    for (const key of requestKeys) {
      const was = ids[before.find(key)]!;
      const now = left[after.find(key)]!;
      if (was !== gone) assert.equal(now, was, `key ${key} moved from ${was} to ${now}`);
      else moved++;
    }
    assert.ok(moved > 0);
  });

  it("when one endpoint joins, moves keys only onto it", () => {
    const ids = endpointKeys(4);
    const before = new HashRing(ids);
    const grown = [...ids, "10.0.0.99:8080"];
    const after = new HashRing(grown);
    for (const key of requestKeys) {
      const now = grown[after.find(key)]!;
      if (now !== "10.0.0.99:8080") assert.equal(now, ids[before.find(key)]);
    }
  });

  it("on a retry, gives another endpoint than the one to avoid; -1 on an empty ring", () => {
    const ring = new HashRing(endpointKeys(3));
    for (const key of requestKeys.slice(0, 200)) {
      const first = ring.find(key);
      const retry = ring.findAvoiding(key, first);
      assert.notEqual(retry, first);
      assert.equal(ring.findAvoiding(key, first), retry);
    }
    assert.equal(new HashRing([]).find("x"), -1);
    assert.equal(new HashRing(["only:1"]).findAvoiding("x", 0), 0);
  });
});

describe("subsetsOf (chashsubset.lua's groups)", () => {
  it("groups endpoints in order and fills the last group from the start", () => {
    assert.deepEqual(subsetsOf(7, 3), [
      [0, 1, 2],
      [3, 4, 5],
      [6, 0, 1],
    ]);
    assert.deepEqual(subsetsOf(2, 3), [[0, 1, 0]]);
    assert.deepEqual(subsetsOf(0, 3), []);
  });

  it("sends one key only to the endpoints of its group, and to more than one of them", () => {
    const chooser = new HashChooser(endpointKeys(9), 3, seeded(7));
    const groups = subsetsOf(9, 3);
    for (const key of requestKeys.slice(0, 100)) {
      const seen = new Set<number>();
      for (let i = 0; i < 30; i++) seen.add(chooser.choose(key, -1));
      const group = groups.find(g => g.includes([...seen][0]!))!;
      for (const index of seen) assert.ok(group.includes(index));
      assert.ok(seen.size > 1);
    }
  });
});

describe("decayEwma", () => {
  it("keeps the average with no time passed, moves most of the way after many decay times", () => {
    assert.equal(decayEwma(100, 0, 10), 100);
    assert.ok(Math.abs(decayEwma(100, EWMA_DECAY_MS * 10, 10) - 10) < 0.01);
    // One decay time: e^-1 of the old average remains (ewma.lua's math.exp(-td/DECAY_TIME)).
    assert.ok(Math.abs(decayEwma(100, EWMA_DECAY_MS, 0) - 100 / Math.E) < 1e-9);
    assert.equal(decayEwma(100, -5, 10), 100);
  });
});

describe("EwmaStats", () => {
  it("scores an endpoint by its response times, decaying towards 0 as time passes", () => {
    let now = 0;
    const stats = new EwmaStats(() => now);
    now = 1000;
    stats.record("a", 200);
    const fresh = stats.score("a");
    assert.ok(fresh > 0);
    now += EWMA_DECAY_MS;
    assert.ok(Math.abs(stats.score("a") - fresh / Math.E) < 1e-9);
    assert.equal(stats.score("unknown"), 0);
  });

  it("sends most traffic to the faster of endpoints of different latency", () => {
    let now = 0;
    const stats = new EwmaStats(() => now, seeded(11));
    const keys = ["slow:1", "fast:1", "mid:1"];
    const latency: Record<string, number> = { "slow:1": 300, "fast:1": 10, "mid:1": 80 };
    const counts: Record<string, number> = { "slow:1": 0, "fast:1": 0, "mid:1": 0 };
    for (let i = 0; i < 3000; i++) {
      const key = keys[stats.choose(keys, -1)]!;
      counts[key]!++;
      now += 5;
      stats.record(key, latency[key]!);
    }
    assert.ok(
      counts["fast:1"]! > counts["mid:1"]! && counts["mid:1"]! > counts["slow:1"]!,
      JSON.stringify(counts),
    );
    assert.ok(counts["fast:1"]! > 1500, JSON.stringify(counts));
  });

  it("never picks the endpoint to avoid when another exists", () => {
    const stats = new EwmaStats(() => 0, seeded(3));
    const keys = endpointKeys(3);
    for (let i = 0; i < 200; i++) assert.notEqual(stats.choose(keys, 1), 1);
    assert.equal(stats.choose(["a"], 0), 0);
    assert.equal(stats.choose([], -1), -1);
    assert.equal(stats.choose(["a", "b"], 0), 1);
  });

  it("seeds endpoints without history with the mean of the others' (slow start)", () => {
    const stats = new EwmaStats(() => 0);
    stats.record("a", 100);
    stats.record("b", 300);
    stats.seed(["a", "b", "c"]);
    assert.equal(stats.score("c"), (stats.score("a") + stats.score("b")) / 2);
  });
});

describe("Backend.pickBy", () => {
  const endpoints: Endpoint[] = [1, 2, 3, 4].map(i => ({
    address: `10.0.0.${i}`,
    port: 80,
    key: `10.0.0.${i}:80`,
  }));

  it("is round-robin without a balance, and hashes a key to one endpoint with one", () => {
    const backend = new Backend("ns/svc:80", endpoints);
    const rr = [0, 1, 2, 3].map(() => backend.pickBy(undefined, "")?.key);
    assert.deepEqual(
      rr,
      endpoints.map(e => e.key),
    );
    const hash = { kind: "hash", by: [], subsetSize: undefined } as const;
    const first = backend.pickBy(hash, "user-42");
    for (let i = 0; i < 20; i++) assert.equal(backend.pickBy(hash, "user-42"), first);
    assert.notEqual(backend.pickBy(hash, "user-42", first), first);
  });

  it("answers undefined for a backend without endpoints, whatever the balance", () => {
    const empty = new Backend("ns/none:80", []);
    assert.equal(empty.pickBy({ kind: "ewma" }, ""), undefined);
    assert.equal(empty.pickBy({ kind: "hash", by: [], subsetSize: 3 }, "k"), undefined);
  });
});
