// The engine with its I/O replaced by direct calls: rounds are run by hand on a fake clock, rows
// go straight into the peers' receive(), probes answer from a set of "down" nodes.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { VoteTerm } from "../core/edge";
import { EdgeDaemon, type DaemonIo, type VoteOnRecord } from "./daemon";
import type { Member } from "./membership";
import { EdgeMetrics } from "./metrics";
import { newNonce, signResult } from "./signing";
import type { Decision } from "./tally";

const key = Buffer.from("0123456789abcdef0123456789abcdef");
const quiet = { info: () => {}, warn: () => {}, debug: () => {} };

function cluster(n: number, maxProbePeers = 16, hmacOverlapMs = 10_000, voteTermPeriods = 3) {
  const members: Member[] = Array.from({ length: n }, (_, i) => ({
    name: `n${i}`,
    ip: `10.0.0.${i + 1}`,
  }));
  let now = 1_000_000;
  const down = new Set<string>();
  const apiDown = new Set<string>();
  // Partition: a node's half, by name; traffic between different halves fails.
  const half = new Map<string, number>();
  const cut = (a: string, b: string) => (half.get(a) ?? 0) !== (half.get(b) ?? 0);
  // The Node annotations: the value and its term. `watch.frozen`: onRecord keeps returning what
  // the watch cache had when it froze (a watch that lags behind the writes).
  const record = new Map<string, string>();
  const terms = new Map<string, VoteTerm>();
  const watch = { frozen: undefined as Map<string, VoteOnRecord> | undefined };
  const freezeWatch = () => {
    watch.frozen = new Map(members.map(m => [m.name, onRecord(m.name)]));
  };
  const onRecord = (node: string): VoteOnRecord =>
    watch.frozen?.get(node) ?? { value: record.get(node), term: terms.get(node) };
  /** Writes that changed the value on record. */
  const writes: { by: string; node: string; value: Decision }[] = [];
  /** Writes of the value already on record, with a new term; `leftMs`: what the old one had left. */
  const refreshes: { by: string; node: string; value: Decision; leftMs?: number }[] = [];
  const daemons = new Map<string, EdgeDaemon>();
  const metrics = new Map<string, EdgeMetrics>();
  for (const m of members) {
    metrics.set(m.name, new EdgeMetrics());
    const io: DaemonIo = {
      now: () => now,
      members: () => members,
      onRecord,
      write: async (node, value, term) => {
        if (apiDown.has(m.name)) throw new Error("API server unreachable");
        const before = { value: record.get(node), term: terms.get(node) };
        record.set(node, value);
        terms.set(node, term);
        if (before.value !== value) writes.push({ by: m.name, node, value });
        else {
          const leftMs = before.term && before.term.validUntilMs - now;
          refreshes.push({ by: m.name, node, value, ...(leftMs === undefined ? {} : { leftMs }) });
        }
      },
      probe: async ip => {
        const target = members.find(x => x.ip === ip);
        const ok = target !== undefined && !down.has(target.name) && !cut(m.name, target.name);
        return [{ kind: "daemon", weight: 1, ok }];
      },
      send: async (to, message) => {
        if (down.has(to.name) || cut(m.name, to.name)) throw new Error("unreachable");
        const reply = daemons.get(to.name)?.receive(JSON.parse(JSON.stringify(message)), m.ip);
        if (reply?.status !== 200) throw new Error(`rejected: ${JSON.stringify(reply)}`);
      },
      log: quiet,
    };
    daemons.set(
      m.name,
      new EdgeDaemon(
        {
          self: m.name,
          keys: [key],
          hmacOverlapMs,
          maxClockSkewMs: 2000,
          checkPeriodMs: 1000,
          scoreLine: 100,
          voteTimeoutMs: 3000,
          messageMaxAgeMs: 30_000,
          maxProbePeers,
          writerFallbackPeriods: 3,
          voteTermPeriods,
          verifySource: true,
        },
        io,
        metrics.get(m.name),
      ),
    );
  }
  const round = async (): Promise<void> => {
    now += 1000;
    for (const [name, d] of daemons) if (!down.has(name)) await d.checkRound();
    await new Promise(r => setImmediate(r)); // let the writes settle
  };
  const stop = () => daemons.forEach(d => d.stop());
  const clock = {
    get now() {
      return now;
    },
    advance: (ms: number) => void (now += ms),
  };
  /** Daemon `name`'s registry as Prometheus reads it, one line per sample. */
  const scrape = async (name: string): Promise<string[]> =>
    ((await metrics.get(name)?.registry.metrics()) ?? "").split("\n");
  return {
    members,
    daemons,
    scrape,
    down,
    apiDown,
    half,
    record,
    terms,
    writes,
    refreshes,
    freezeWatch,
    clock,
    round,
    stop,
  };
}

describe("EdgeDaemon", () => {
  let stop = () => {};
  afterEach(() => stop());

  it("5 healthy nodes: each is written true exactly once, by the lowest-named checker", async () => {
    const c = cluster(5);
    stop = c.stop;
    for (let i = 0; i < 4; i++) await c.round();
    assert.deepEqual(
      [...c.record.entries()].sort(),
      c.members.map(m => [m.name, "true"]),
    );
    assert.equal(c.writes.length, 5, JSON.stringify(c.writes));
    assert.ok(
      c.writes.every(w => w.by === "n0"),
      "n0 is the lowest-named checker of every node",
    );
  });

  it("a dead node is written false once; the dead writer is replaced by the next lowest", async () => {
    const c = cluster(5);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    c.down.add("n0");
    for (let i = 0; i < 5; i++) await c.round();
    assert.equal(c.record.get("n0"), "false");
    const falseWrites = c.writes.filter(w => w.value === "false");
    assert.deepEqual(falseWrites, [{ by: "n1", node: "n0", value: "false" }]);
    const term = c.terms.get("n0");
    assert.equal(term && term.validUntilMs - term.decidedAtMs, 3000, '"false" has a term too');
  });

  it("the dead node is the lowest-named (the writer of everything): decided within 2 rounds", async () => {
    const c = cluster(7);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    const before = c.writes.length;
    c.down.add("n0");
    await c.round();
    await c.round();
    assert.deepEqual(c.writes.slice(before), [{ by: "n1", node: "n0", value: "false" }]);
  });

  it("a writer that cannot reach the API server is covered by the others after the fallback periods", async () => {
    const c = cluster(3);
    stop = c.stop;
    c.apiDown.add("n0");
    await c.round();
    assert.equal(c.record.size, 0, "only n0 may write at first, and it cannot");
    for (let i = 0; i < 4; i++) await c.round();
    assert.deepEqual([...c.record.values()], ["true", "true", "true"]);
  });

  it("2|2 even split: neither half writes a value; the last votes go stale", async () => {
    const c = cluster(4);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    const before = c.writes.length;
    c.half.set("n2", 1).set("n3", 1);
    for (let i = 0; i < 8; i++) await c.round();
    assert.equal(c.writes.length, before, JSON.stringify(c.writes.slice(before)));
    assert.deepEqual(
      [...c.record.values()],
      ["true", "true", "true", "true"],
      "the last value stays",
    );
    // Rows from before the cut count for the vote timeout (3 periods), then nobody renews.
    assert.ok(
      [...c.terms.values()].every(t => t.validUntilMs <= c.clock.now),
      "past their terms",
    );
    const view = c.daemons.get("n0")?.view();
    assert.ok(view?.targets.every(t => t.decision === undefined));
  });

  it("4|3 split: the 4 write the 3 false; the 3 write nothing", async () => {
    const c = cluster(7);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    const before = c.writes.length;
    for (const n of ["n4", "n5", "n6"]) c.half.set(n, 1);
    for (let i = 0; i < 6; i++) await c.round();
    const after = c.writes.slice(before);
    assert.deepEqual(after.map(w => `${w.node}=${w.value}`).sort(), [
      "n4=false",
      "n5=false",
      "n6=false",
    ]);
    assert.ok(after.every(w => ["n0", "n1", "n2", "n3"].includes(w.by)));
  });

  it("3|4 split with the 3 lowest-named in the minority: the minority never writes back", async () => {
    const c = cluster(7);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    const before = c.writes.length;
    for (const n of ["n3", "n4", "n5", "n6"]) c.half.set(n, 1);
    for (let i = 0; i < 8; i++) await c.round();
    const after = c.writes.slice(before);
    assert.deepEqual(after.map(w => `${w.node}=${w.value}`).sort(), [
      "n0=false",
      "n1=false",
      "n2=false",
    ]);
    assert.ok(
      after.every(w => ["n3", "n4", "n5", "n6"].includes(w.by)),
      JSON.stringify(after),
    );
  });

  it("200 nodes sampled to 16 probes: every node is decided true", async () => {
    const c = cluster(200, 16);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    assert.equal([...c.record.values()].filter(v => v === "true").length, 200);
    assert.ok(c.writes.length <= 200 * 1.05, `${c.writes.length} writes for 200 decisions`);
  });
});

describe("EdgeDaemon: every vote is written with a term, renewed while its majority holds", () => {
  let stop = () => {};
  afterEach(() => stop());
  const PERIOD = 1000;

  it("a written vote carries its term: decided at the write, valid for 3 check periods", async () => {
    const c = cluster(5);
    stop = c.stop;
    // Round 1 exchanges rows; the record is first seen then, and round 2's rows are the first
    // ones checked after it (tally.ts: evidence newer than the record), so round 3 writes.
    for (let i = 0; i < 2; i++) await c.round();
    assert.equal(c.record.size, 0);
    await c.round();
    const writtenAt = c.clock.now;
    assert.equal(c.record.size, 5);
    for (const m of c.members) {
      assert.deepEqual(c.terms.get(m.name), {
        decidedAtMs: writtenAt,
        validUntilMs: writtenAt + 3 * PERIOD,
      });
    }
  });

  it("the writer renews the term before it has less than 2 periods left; it never runs low", async () => {
    const c = cluster(5);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    for (let i = 0; i < 8; i++) {
      const before = c.refreshes.length;
      await c.round();
      for (const m of c.members) {
        const left = (c.terms.get(m.name)?.validUntilMs ?? 0) - c.clock.now;
        assert.ok(left >= 2 * PERIOD, `${m.name}: ${left} ms left after round ${i}`);
      }
      const renewed = c.refreshes.slice(before).map(r => r.node);
      assert.equal(new Set(renewed).size, renewed.length, "at most one renewal per node a round");
    }
    assert.ok(c.refreshes.length >= 5 * 3, `${c.refreshes.length} renewals in 8 periods`);
    assert.ok(
      c.refreshes.every(r => r.by === "n0"),
      "n0, the writer, renews",
    );
    assert.ok(c.refreshes.every(r => r.leftMs !== undefined && r.leftMs < 2 * PERIOD));
    assert.equal(c.writes.length, 5, "the values themselves were written once");
  });

  it("a writer that cannot write: the others renew only when less than 1 period is left, before it runs out", async () => {
    const c = cluster(3);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    c.apiDown.add("n0"); // still heard from, so still the writer in everyone's view
    c.clock.advance(PERIOD / 2); // daemons do not decide in step with the term's start
    const before = c.refreshes.length;
    for (let i = 0; i < 8; i++) {
      await c.round();
      for (const m of c.members) {
        const until = c.terms.get(m.name)?.validUntilMs ?? 0;
        assert.ok(until > c.clock.now, `${m.name}'s vote ran out at round ${i}`);
      }
    }
    const byOthers = c.refreshes.slice(before);
    assert.ok(byOthers.length >= 3, `${byOthers.length} renewals by the others`);
    assert.ok(byOthers.every(r => r.by !== "n0"));
    assert.ok(
      byOthers.every(r => r.leftMs !== undefined && r.leftMs < PERIOD),
      JSON.stringify(byOthers),
    );
  });

  it("a group of two with one node powered off: nothing is written alone, and both votes go stale", async () => {
    const c = cluster(2);
    stop = c.stop;
    for (let i = 0; i < 3; i++) await c.round();
    assert.deepEqual([c.record.get("n0"), c.record.get("n1")], ["true", "true"]);
    c.down.add("n1");
    const [writes, refreshes] = [c.writes.length, c.refreshes.length];
    for (let i = 0; i < 8; i++) await c.round();
    assert.equal(c.writes.length, writes, "the survivor alone writes no value");
    assert.ok(
      c.refreshes.slice(refreshes).every(r => r.node !== "n1"),
      "the powered-off node's true is never renewed",
    );
    for (const node of ["n0", "n1"]) {
      const until = c.terms.get(node)?.validUntilMs ?? Number.POSITIVE_INFINITY;
      assert.ok(until <= c.clock.now, `${node}'s vote is past its term`);
    }
    assert.deepEqual([c.record.get("n0"), c.record.get("n1")], ["true", "true"], "values stay");
  });

  it("a vote on record without a term (written before terms) gets one at once, once per node", async () => {
    const c = cluster(5);
    stop = c.stop;
    for (const m of c.members) c.record.set(m.name, "true");
    // A missing term counts as none left: the first daemon holding the decision writes it, the
    // writer or not (the vote protects nothing until then).
    for (let i = 0; i < 2; i++) await c.round();
    assert.equal(c.writes.length, 0, "no value changed");
    assert.deepEqual(
      c.refreshes.map(r => [r.node, r.leftMs]).sort(),
      c.members.map(m => [m.name, undefined]),
    );
    assert.equal(c.terms.size, 5);
  });

  it("while the watch has not shown its write, a daemon does not write the same vote again", async () => {
    const c = cluster(3);
    stop = c.stop;
    c.freezeWatch(); // the watch cache never sees a write
    for (let i = 0; i < 3; i++) await c.round();
    assert.equal(c.writes.length, 3);
    for (const d of c.daemons.values()) d.decide(); // a burst of rows: decide again, same time
    c.clock.advance(PERIOD / 2);
    for (const d of c.daemons.values()) d.decide();
    await new Promise(r => setImmediate(r));
    assert.equal(c.writes.length + c.refreshes.length, 3, "within a period: no repeat");
    c.clock.advance(PERIOD / 2);
    for (const d of c.daemons.values()) d.decide();
    await new Promise(r => setImmediate(r));
    assert.equal(c.refreshes.length, 3, "a period later the write is repeated, once");
  });
});

function pair(options: { overlapMs: number; maxClockSkewMs?: number }) {
  const clock = { now: 5_000_000 };
  const metrics = new EdgeMetrics();
  const members: Member[] = [
    { name: "a", ip: "10.0.0.1" },
    { name: "b", ip: "10.0.0.2" },
  ];
  const d = new EdgeDaemon(
    {
      self: "a",
      keys: [key],
      hmacOverlapMs: options.overlapMs,
      maxClockSkewMs: options.maxClockSkewMs ?? 2000,
      checkPeriodMs: 1000,
      scoreLine: 100,
      voteTimeoutMs: 3000,
      messageMaxAgeMs: 5000,
      maxProbePeers: 16,
      writerFallbackPeriods: 3,
      voteTermPeriods: 3,
      verifySource: true,
    },
    {
      now: () => clock.now,
      members: () => members,
      onRecord: () => ({}),
      write: async () => {},
      probe: async () => [],
      send: async () => {},
      log: quiet,
    },
    metrics,
  );
  /** `sender`'s row about itself, signed with `keys`, made `skew` ms ahead on its clock. */
  const rowOf = (sender: string, keys: Buffer[] = [key], skew = 0) =>
    signResult(
      {
        sender,
        timestamp: clock.now + skew,
        nonce: newNonce(),
        checkedAt: clock.now + skew - 100,
        results: { [sender]: true },
      },
      keys,
    );
  /** b's row about itself, signed with `keys`, sent `skew` ms ahead on b's clock. */
  const fromB = (keys: Buffer[], skew = 0) => d.receive(rowOf("b", keys, skew), "10.0.0.2").status;
  return { d, clock, fromB, rowOf, members, metrics };
}

describe("EdgeDaemon key rotation", () => {
  const next = Buffer.from("fedcba9876543210fedcba9876543210");

  it("after a rotation the old key verifies for the overlap, then is refused", () => {
    const { d, clock, fromB } = pair({ overlapMs: 6000 });
    d.setKeys([next]);
    assert.equal(fromB([key]), 200, "old key, inside the overlap");
    assert.equal(fromB([next]), 200, "new key");
    assert.deepEqual(d.view().keys, { current: 1, retired: 1 });
    clock.now += 6001;
    assert.equal(fromB([key]), 401, "old key, after the overlap");
    assert.equal(fromB([next]), 200);
    assert.deepEqual(d.view().keys, { current: 1, retired: 0 });
    d.stop();
  });

  it("--hmac-overlap=0 cuts the old key off at once (a leaked key)", () => {
    const { d, fromB } = pair({ overlapMs: 0 });
    d.setKeys([next]);
    assert.equal(fromB([key]), 401);
    d.stop();
  });

  it("re-reading the same keys is not a rotation (the overlap is not restarted)", () => {
    const { d, clock, fromB } = pair({ overlapMs: 6000 });
    d.setKeys([next]);
    clock.now += 5000;
    d.setKeys([Buffer.from(next)]);
    clock.now += 1001;
    assert.equal(fromB([key]), 401);
    d.stop();
  });
});

describe("EdgeDaemon: half the group rotated", () => {
  // Real engines, in-memory transport: every row one daemon sends reaches the others' receive().
  for (const [overlapMs, lost] of [
    [10_000, false],
    [0, true],
  ] as const) {
    it(`overlap ${overlapMs} ms: rotating the key of 3 of 6 daemons ${lost ? "loses rows (the gap)" : "loses no row and keeps every vote"}`, async () => {
      const c = cluster(6, 16, overlapMs);
      for (let i = 0; i < 3; i++) await c.round();
      const rejectedBefore = [...c.daemons.values()].map(
        d => d.stats.rejected["bad-signature"] ?? 0,
      );
      assert.deepEqual(rejectedBefore, [0, 0, 0, 0, 0, 0]);
      const next = Buffer.from("fedcba9876543210fedcba9876543210");
      for (const name of ["n0", "n1", "n2"]) c.daemons.get(name)?.setKeys([next]);
      for (let i = 0; i < 3; i++) await c.round();
      const rejected = [...c.daemons.values()].reduce(
        (sum, d) => sum + (d.stats.rejected["bad-signature"] ?? 0),
        0,
      );
      const view = c.daemons.get("n0")?.view();
      if (lost) {
        assert.ok(rejected > 0, "without the overlap the halves reject each other");
      } else {
        assert.equal(rejected, 0, "no row lost");
        assert.ok(view?.targets.every(t => t.yes.length === 6 && t.decision === "true"));
      }
      assert.deepEqual(
        [...c.record.values()],
        ["true", "true", "true", "true", "true", "true"],
        "no node is ever written false",
      );
      c.stop();
    });
  }
});

describe("EdgeDaemon: a sender with a skewed clock", () => {
  it("ahead within the allowed skew: accepted, but its row expires as a synchronised one would", () => {
    const { d, clock, fromB } = pair({ overlapMs: 0, maxClockSkewMs: 2000 });
    const received = clock.now;
    assert.equal(fromB([key], 1900), 200);
    const row = d.view().rows.find(r => r.sender === "b");
    assert.equal(row?.checkedAt, received - 100, "kept on our clock, not b's (+1.9 s)");
    d.stop();
  });

  it("ahead beyond the allowed skew: refused (422 from-the-future)", () => {
    const { d, fromB } = pair({ overlapMs: 0, maxClockSkewMs: 2000 });
    assert.equal(fromB([key], 2100), 422);
    assert.equal(d.stats.rejected["from-the-future"], 1);
    d.stop();
  });

  it("behind by more than the message max age (5 s): refused as stale", () => {
    const { d, fromB } = pair({ overlapMs: 0 });
    assert.equal(fromB([key], -5200), 422);
    assert.equal(d.stats.rejected.stale, 1);
    d.stop();
  });

  it("a row from a sender 1.9 s ahead stops counting when a synchronised one would", () => {
    const { d, clock, fromB } = pair({ overlapMs: 0, maxClockSkewMs: 2000 });
    assert.equal(fromB([key], 1900), 200);
    // b checked 100 ms before sending: as seen here, 100 ms before receipt, whatever b's clock
    // said; the vote timeout (3 s) runs from then, not from b's +1.8 s.
    clock.now += 2900;
    assert.equal(d.view().targets.find(t => t.target === "b")?.yes.length, 1);
    clock.now += 1;
    assert.equal(d.view().targets.find(t => t.target === "b")?.yes.length, 0);
    d.stop();
  });
});

describe("EdgeDaemon: a message's nonce is remembered only once the message is accepted", () => {
  // The attack: sniff b's genuine message and send it first from another address. If the receiver
  // remembered the nonce before checking the source, b's own copy would then be refused as a
  // replay: anyone on the path could suppress b's votes.
  it("a sniffed message replayed from a wrong address first: 403, then the genuine one is accepted", () => {
    const { d, rowOf } = pair({ overlapMs: 0 });
    const genuine = rowOf("b");
    const replayed = d.receive(structuredClone(genuine), "10.0.0.66");
    assert.deepEqual([replayed.status, replayed.body.reason], [403, "wrong-source"]);
    const real = d.receive(structuredClone(genuine), "10.0.0.2");
    assert.deepEqual([real.status, real.body], [200, { accepted: true }]);
    assert.equal(d.view().rows.find(r => r.sender === "b")?.results.b, true, "b's row counts");
    d.stop();
  });

  it("a message from a node outside the group does not burn its nonce", () => {
    const { d, rowOf, members } = pair({ overlapMs: 0 });
    const fromC = rowOf("c");
    const outside = d.receive(structuredClone(fromC), "10.0.0.3");
    assert.deepEqual([outside.status, outside.body.reason], [403, "not-a-member"]);
    members.push({ name: "c", ip: "10.0.0.3" }); // c joins the group (the watch has it now)
    assert.equal(d.receive(structuredClone(fromC), "10.0.0.3").status, 200);
    d.stop();
  });

  it("a true replay from the sender's own address is still refused (409 replayed)", () => {
    const { d, rowOf } = pair({ overlapMs: 0 });
    const genuine = rowOf("b");
    assert.equal(d.receive(structuredClone(genuine), "10.0.0.2").status, 200);
    const again = d.receive(structuredClone(genuine), "10.0.0.2");
    assert.deepEqual([again.status, again.body.reason], [409, "replayed"]);
    assert.equal(d.stats.rejected.replayed, 1);
    d.stop();
  });
});

describe("EdgeDaemon metrics (read as Prometheus scrapes them)", () => {
  let stop = () => {};
  afterEach(() => stop());
  /** The value of the sample `series` (name and labels exactly as written), or undefined. */
  const sample = (lines: string[], series: string): number | undefined => {
    const line = lines.find(l => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it("probe results by peer and check: 1 while it passes, 0 once it fails", async () => {
    const c = cluster(5);
    stop = c.stop;
    await c.round();
    let lines = await c.scrape("n0");
    for (const m of c.members) {
      assert.equal(sample(lines, `bulwark_edge_probe_ok{peer="${m.name}",check="daemon"}`), 1);
    }
    c.down.add("n3");
    await c.round();
    lines = await c.scrape("n0");
    assert.equal(sample(lines, 'bulwark_edge_probe_ok{peer="n3",check="daemon"}'), 0);
    assert.equal(sample(lines, 'bulwark_edge_probe_ok{peer="n2",check="daemon"}'), 1);
  });

  it("a peer that left the group leaves no probe series behind", async () => {
    const c = cluster(5);
    stop = c.stop;
    await c.round();
    c.members.splice(4, 1); // n4 left the group
    await c.round();
    const lines = await c.scrape("n0");
    assert.equal(sample(lines, 'bulwark_edge_probe_ok{peer="n4",check="daemon"}'), undefined);
    assert.equal(sample(lines, 'bulwark_edge_probe_ok{peer="n3",check="daemon"}'), 1);
  });

  it("votes written by value (changes and refreshes), and the decision latency of changes", async () => {
    const c = cluster(5);
    stop = c.stop;
    for (let i = 0; i < 6; i++) await c.round();
    c.down.add("n4");
    for (let i = 0; i < 4; i++) await c.round();
    assert.equal(c.record.get("n4"), "false");
    const lines = await c.scrape("n0");
    const byN0 = (value: Decision) =>
      [...c.writes, ...c.refreshes].filter(w => w.by === "n0" && w.value === value).length;
    assert.equal(sample(lines, 'bulwark_edge_votes_written_total{value="true"}'), byN0("true"));
    assert.equal(sample(lines, 'bulwark_edge_votes_written_total{value="false"}'), byN0("false"));
    assert.ok(byN0("true") > 5, "refreshes count as written votes");
    // One latency per new decision n0 wrote (the 5 first "true"s and n4's "false"), none per
    // refresh; each from the start of the round that first held it: within 3 periods here.
    const changes = c.writes.filter(w => w.by === "n0").length;
    assert.equal(changes, 6);
    assert.equal(sample(lines, "bulwark_edge_decision_seconds_count"), changes);
    assert.equal(sample(lines, 'bulwark_edge_decision_seconds_bucket{le="5"}'), changes);
    // The first "true"s were held in round 2 (round 1 only exchanged rows) and written in round 3
    // (evidence newer than the record): at least a period each.
    assert.ok((sample(lines, "bulwark_edge_decision_seconds_sum") ?? 0) >= 5);
  });

  it("messages accepted, and rejected by reason", async () => {
    const { d, rowOf, metrics } = pair({ overlapMs: 0 });
    const genuine = rowOf("b");
    d.receive(structuredClone(genuine), "10.0.0.66");
    d.receive(structuredClone(genuine), "10.0.0.2");
    d.receive(structuredClone(genuine), "10.0.0.2");
    d.receive({ sender: "b" }, "10.0.0.2");
    const lines = (await metrics.registry.metrics()).split("\n");
    assert.equal(sample(lines, "bulwark_edge_messages_accepted_total"), 1);
    for (const [reason, n] of [
      ["wrong-source", 1],
      ["replayed", 1],
      ["malformed", 1],
    ] as const) {
      assert.equal(sample(lines, `bulwark_edge_messages_rejected_total{reason="${reason}"}`), n);
    }
    d.stop();
  });
});
