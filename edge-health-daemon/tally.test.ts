import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ResultStore, shouldRefresh, shouldWrite, tally, writerOf } from "./tally";

const now = 1_000_000;
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);

/** A store where each sender in `views` reported `results` at `checkedAt` (default now). */
function storeOf(views: Record<string, Record<string, boolean>>, checkedAt = now): ResultStore {
  const store = new ResultStore();
  for (const [sender, results] of Object.entries(views)) store.put({ sender, checkedAt, results });
  return store;
}
const all = (ns: string[], verdict: boolean) => Object.fromEntries(ns.map(n => [n, verdict]));

describe("tally: strict majority of the whole electorate", () => {
  it("7 nodes all healthy: true", () => {
    const group = names(7);
    const store = storeOf(Object.fromEntries(group.map(s => [s, all(group, true)])));
    const t = tally({ target: "n3", checkers: group, store, now, voteTimeoutMs: 3000 });
    assert.equal(t.decision, "true");
    assert.equal(t.needed, 4);
  });

  it("one of 7 dead: the six others' no is a majority (its stale yes does not matter)", () => {
    const group = names(7);
    const views = Object.fromEntries(
      group.slice(0, 6).map(s => [s, { ...all(group, true), n6: false }]),
    );
    const store = storeOf(views);
    store.put({ sender: "n6", checkedAt: now - 1000, results: all(group, true) });
    assert.equal(
      tally({ target: "n6", checkers: group, store, now, voteTimeoutMs: 3000 }).decision,
      "false",
    );
  });

  it("4|3 split: the 4 decide both ways, the 3 decide nothing", () => {
    const group = names(7);
    const a = group.slice(0, 4);
    const b = group.slice(4);
    const aSide = storeOf(
      Object.fromEntries(a.map(s => [s, { ...all(a, true), ...all(b, false) }])),
    );
    const bSide = storeOf(
      Object.fromEntries(b.map(s => [s, { ...all(b, true), ...all(a, false) }])),
    );
    const on = (store: ResultStore, target: string) =>
      tally({ target, checkers: group, store, now, voteTimeoutMs: 3000 }).decision;
    assert.equal(on(aSide, "n0"), "true");
    assert.equal(on(aSide, "n5"), "false");
    assert.equal(on(bSide, "n5"), undefined, "3 yes of 7 is no majority");
    assert.equal(on(bSide, "n0"), undefined, "3 no of 7 never writes false");
  });

  it("even split 2|2: nobody decides", () => {
    const group = names(4);
    const store = storeOf({ n0: all(["n0", "n1"], true), n1: all(["n0", "n1"], true) });
    store.put({
      sender: "n0",
      checkedAt: now,
      results: { ...all(["n0", "n1"], true), n2: false, n3: false },
    });
    for (const target of group) {
      assert.equal(
        tally({ target, checkers: group, store, now, voteTimeoutMs: 3000 }).decision,
        undefined,
      );
    }
  });

  it("group of 1 never votes, even on itself", () => {
    const store = storeOf({ n0: { n0: true } });
    const t = tally({ target: "n0", checkers: ["n0"], store, now, voteTimeoutMs: 3000 });
    assert.equal(t.decision, undefined);
    assert.match(t.reason, /group of one/);
  });

  it("group of 2: both must agree; the survivor alone never writes false on a dead peer", () => {
    const both = storeOf({ n0: { n0: true, n1: true }, n1: { n0: true, n1: true } });
    assert.equal(
      tally({ target: "n1", checkers: ["n0", "n1"], store: both, now, voteTimeoutMs: 3000 })
        .decision,
      "true",
    );
    const alone = storeOf({ n0: { n0: true, n1: false } });
    alone.put({ sender: "n1", checkedAt: now - 10_000, results: { n0: true, n1: true } });
    assert.equal(
      tally({ target: "n1", checkers: ["n0", "n1"], store: alone, now, voteTimeoutMs: 3000 })
        .decision,
      undefined,
    );
  });

  it("counts by the sender's check time: old rows are not fresh however recently received", () => {
    const group = names(3);
    const store = storeOf(Object.fromEntries(group.map(s => [s, all(group, false)])), now - 5000);
    assert.equal(
      tally({ target: "n1", checkers: group, store, now, voteTimeoutMs: 3000 }).decision,
      undefined,
    );
  });

  it("ignores results from senders outside the electorate", () => {
    const store = storeOf({ x: { n0: false }, y: { n0: false }, n1: { n0: false } });
    assert.equal(
      tally({ target: "n0", checkers: ["n0", "n1", "n2"], store, now, voteTimeoutMs: 3000 })
        .decision,
      undefined,
    );
  });

  it("an older row never replaces a newer one", () => {
    const store = new ResultStore();
    assert.equal(store.put({ sender: "a", checkedAt: 10, results: { b: true } }), true);
    assert.equal(store.put({ sender: "a", checkedAt: 5, results: { b: false } }), false);
    assert.equal(store.get("a")?.results.b, true);
  });
});

describe("single writer", () => {
  it("is the lowest-named checker this daemon hears from", () => {
    const checkers = ["c", "a", "b"];
    assert.equal(writerOf({ checkers, self: "c", alive: () => true }), "a");
    assert.equal(writerOf({ checkers, self: "c", alive: n => n !== "a" }), "b");
    assert.equal(writerOf({ checkers, self: "c", alive: () => false }), "c");
  });

  const cases: [string, Parameters<typeof shouldWrite>[0], boolean][] = [
    [
      "writer, decision differs",
      {
        decision: "false",
        onRecord: "true",
        isWriter: true,
        pendingPeriods: 0,
        fallbackPeriods: 3,
      },
      true,
    ],
    [
      "writer, already on record",
      { decision: "true", onRecord: "true", isWriter: true, pendingPeriods: 9, fallbackPeriods: 3 },
      false,
    ],
    [
      "not the writer, pending briefly",
      {
        decision: "true",
        onRecord: undefined,
        isWriter: false,
        pendingPeriods: 2,
        fallbackPeriods: 3,
      },
      false,
    ],
    [
      "not the writer, pending past the fallback",
      {
        decision: "true",
        onRecord: undefined,
        isWriter: false,
        pendingPeriods: 3,
        fallbackPeriods: 3,
      },
      true,
    ],
    [
      "no decision",
      {
        decision: undefined,
        onRecord: "true",
        isWriter: true,
        pendingPeriods: 9,
        fallbackPeriods: 3,
      },
      false,
    ],
  ];
  for (const [what, input, expected] of cases) {
    it(`${what}: ${expected ? "writes" : "does not write"}`, () =>
      assert.equal(shouldWrite(input), expected));
  }
});

describe("shouldRefresh: renewing the term of the decision on record (period 1 s, term 3 periods)", () => {
  const base = { checkPeriodMs: 1000, voteTermPeriods: 3 };
  type Case = Omit<Parameters<typeof shouldRefresh>[0], keyof typeof base>;
  /** The decision is the value on record ("true"); `termLeftMs` undefined: no readable term. */
  const held = (isWriter: boolean, termLeftMs: number | undefined): Case => ({
    decision: "true",
    onRecord: "true",
    isWriter,
    termLeftMs,
  });
  const cases: [string, Case, boolean][] = [
    ["writer, 2.5 periods left", held(true, 2500), false],
    ["writer, exactly 2 periods left", held(true, 2000), false],
    ["writer, just under 2 periods left", held(true, 1999), true],
    ["writer, no readable term", held(true, undefined), true],
    ["writer, term expired", held(true, -500), true],
    [
      'writer, a "false" with 1.5 periods left',
      { ...held(true, 1500), decision: "false", onRecord: "false" },
      true,
    ],
    ["not the writer, 1.9 periods left", held(false, 1900), false],
    ["not the writer, exactly 1 period left", held(false, 1000), false],
    ["not the writer, under 1 period left", held(false, 999), true],
    ["not the writer, no readable term", held(false, undefined), true],
    [
      "a decision other than the record (a change: shouldWrite)",
      { ...held(true, 0), decision: "false" },
      false,
    ],
    ["no decision: the term runs out", { ...held(true, 0), decision: undefined }, false],
    [
      "nothing on record (a first write: shouldWrite)",
      { ...held(true, undefined), onRecord: undefined },
      false,
    ],
  ];
  for (const [what, input, expected] of cases) {
    it(`${what}: ${expected ? "refreshes" : "does not refresh"}`, () =>
      assert.equal(shouldRefresh({ ...base, ...input }), expected));
  }

  it("a longer term moves the writer's threshold with it (5 periods: under 4 left)", () => {
    const writer = (termLeftMs: number) => ({ ...held(true, termLeftMs), checkPeriodMs: 1000 });
    assert.equal(shouldRefresh({ ...writer(4000), voteTermPeriods: 5 }), false);
    assert.equal(shouldRefresh({ ...writer(3999), voteTermPeriods: 5 }), true);
  });
});
