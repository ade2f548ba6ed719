import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BREAKER_ERROR_MAX,
  breakerGate,
  CLOSED_BREAKER,
  isBreakerOpen,
  parseBreaker,
  readBreaker,
  recordFailure,
  recordSuccess,
  resetBreaker,
  serializeBreaker,
  staleBreakerKeys,
  writeBreaker,
  type BreakerRecord,
} from "./breaker";

const UID = "6f1c2b1e-3f0a-4a57-9a51-0d7f3c7e2a10";
const T0 = new Date("2025-05-01T10:00:00Z");
const T1 = new Date("2025-05-01T10:05:00Z");
const T2 = new Date("2025-05-01T10:20:00Z");

function fail(times: number, record?: BreakerRecord): BreakerRecord | undefined {
  let current = record;
  const clock = [T0, T1, T2, T2, T2];
  for (let i = 0; i < times; i++)
    current = recordFailure(current, `timeout ${i + 1}`, clock[i] ?? T2);
  return current;
}

describe("breaker transitions", () => {
  const cases: [string, BreakerRecord | undefined, BreakerRecord | undefined, boolean][] = [
    ["no record", undefined, undefined, false],
    ["one failure", fail(1), { failures: 1, lastError: "timeout 1" }, false],
    ["two failures", fail(2), { failures: 2, lastError: "timeout 2" }, false],
    [
      "three failures",
      fail(3),
      { failures: 3, lastError: "timeout 3", openedAt: T2.toISOString() },
      true,
    ],
    [
      "five failures (stays open since the third)",
      fail(5),
      { failures: 5, lastError: "timeout 5", openedAt: T2.toISOString() },
      true,
    ],
    [
      "a success (after any failures: the probe through an open one too)",
      recordSuccess(),
      { failures: 0 },
      false,
    ],
    ["three failures then a reset", resetBreaker(), { failures: 0 }, false],
    [
      "a success, then three failures",
      fail(3, recordSuccess()),
      { failures: 3, lastError: "timeout 3", openedAt: T2.toISOString() },
      true,
    ],
  ];
  for (const [title, record, expected, open] of cases) {
    it(`given ${title}, returns ${JSON.stringify(expected)}, ${open ? "open" : "closed"}`, () => {
      assert.deepEqual(record, expected);
      assert.equal(isBreakerOpen(record), open);
      assert.equal(breakerGate(record).allow, !open);
    });
  }

  it("given a custom threshold of 1, returns open after one failure", () => {
    assert.equal(isBreakerOpen(recordFailure(undefined, "x", T0, 1)), true);
  });

  it("given a long error, returns it cut to the cap", () => {
    assert.equal(
      recordFailure(undefined, "e".repeat(2000), T0).lastError?.length,
      BREAKER_ERROR_MAX,
    );
  });

  it("given an open breaker, returns a gate reason naming the failures and the last error", () => {
    const gate = breakerGate(fail(3));
    assert.equal(gate.allow, false);
    assert.match(
      gate.allow ? "" : gate.reason,
      /^breaker open since 2025-05-01T10:20:00\.000Z after 3 failed grants \(last: timeout 3\)$/,
    );
  });

  it("given the record of a pod, returns it with its pod details kept across failures", () => {
    const pod = { namespace: "apps", name: "web-1", ip: "10.244.1.17" };
    assert.deepEqual(recordFailure({ failures: 1, pod }, "x", T0).pod, pod);
  });

  it("given the shared closed record, returns it frozen so no transition can change it", () => {
    assert.ok(Object.isFrozen(CLOSED_BREAKER));
    assert.notEqual(resetBreaker(), CLOSED_BREAKER);
  });
});

describe("breaker storage", () => {
  const open = fail(3) ?? CLOSED_BREAKER;

  it("given an open record, returns the same record after writing and reading it", () => {
    const written = writeBreaker({ other: "x" }, UID, open);
    assert.equal(written.ok, true);
    const data = written.ok ? written.value : {};
    assert.deepEqual(Object.keys(data).sort(), ["other", UID].sort());
    assert.deepEqual(readBreaker(data, UID), { ok: true, value: open, warnings: [] });
  });

  it("given a closed record, returns the data without the pod's entry", () => {
    const data = { [UID]: serializeBreaker(open), other: "x" };
    assert.deepEqual(writeBreaker(data, UID, resetBreaker()), {
      ok: true,
      value: { other: "x" },
      warnings: [],
    });
    assert.deepEqual(data[UID], serializeBreaker(open), "the input is unchanged");
  });

  it("given no entry, returns a closed breaker", () => {
    assert.deepEqual(readBreaker(undefined, UID), {
      ok: true,
      value: { failures: 0 },
      warnings: [],
    });
  });

  const badKeys: [string, RegExp][] = [
    ["ns/name", /^data\["ns\/name"\]: key must consist of/],
    ["..x", /must not start with '\.\.'/],
    ["", /must consist of/],
  ];
  for (const [key, expected] of badKeys) {
    it(`given the key ${JSON.stringify(key)}, returns an error on read and on write`, () => {
      for (const result of [readBreaker({}, key), writeBreaker({}, key, open)]) {
        assert.equal(result.ok, false);
        assert.match(
          result.ok ? "" : `${result.errors[0]?.field}: ${result.errors[0]?.message}`,
          expected,
        );
      }
    });
  }

  const badValues: [string, string, RegExp][] = [
    ["malformed JSON", "{", /^data\["6f1c.*"\]: is not JSON/],
    ["a negative count", JSON.stringify({ failures: -1 }), /^data\["6f1c.*"\]\.failures: /],
    ["a bad openedAt", JSON.stringify({ failures: 3, openedAt: "soon" }), /\.openedAt: /],
  ];
  for (const [title, value, expected] of badValues) {
    it(`given ${title}, returns an error naming the entry`, () => {
      const result = parseBreaker(value, UID);
      assert.equal(result.ok, false);
      assert.match(
        result.ok ? "" : `${result.errors[0]?.field}: ${result.errors[0]?.message}`,
        expected,
      );
    });
  }

  it("given data that would pass 1 MiB, returns an error and no data", () => {
    const full = { filler: "x".repeat(1024 * 1024 - 100) };
    const result = writeBreaker(full, UID, open);
    assert.equal(result.ok, false);
    assert.match(
      result.ok ? "" : (result.errors[0]?.message ?? ""),
      /over the API server's 1048576/,
    );
  });

  it("given entries of live and gone pods, returns the gone pods' keys, sorted", () => {
    const data = { b: "{}", a: "{}", live: "{}" };
    assert.deepEqual(staleBreakerKeys(data, new Set(["live"])), ["a", "b"]);
    assert.deepEqual(staleBreakerKeys(undefined, new Set()), []);
  });
});
