import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  failureSummary,
  initVerdict,
  parseGrantStatus,
  serializeGrantStatus,
  type GrantStatus,
} from "./grant-status";
import { mayClaim, newClaim, otherHolder, serializeClaim } from "./claim";

const STATUS: GrantStatus = {
  phase: "granted",
  uid: "u1",
  ip: "10.0.0.1",
  rev: 4,
  attempt: 1,
  failures: 0,
  permissions: [{ name: "orders", provider: "authz", state: "granted", jobId: "j" }],
  updatedAt: "2026-01-01T00:00:00.000Z",
};

describe("grant status annotation", () => {
  it("round-trips, and reads injection's plain 'pending' (or garbage) as no status", () => {
    assert.deepEqual(parseGrantStatus(serializeGrantStatus(STATUS)), STATUS);
    assert.equal(parseGrantStatus("pending"), undefined);
    assert.equal(parseGrantStatus("{bad"), undefined);
    assert.equal(parseGrantStatus(undefined), undefined);
  });

  const cases: [string, GrantStatus | undefined, string, string][] = [
    ["granted to this pod and IP", STATUS, "u1", "granted"],
    ["granted to another IP (sandbox recreated)", { ...STATUS, ip: "10.0.0.2" }, "u1", "wait"],
    ["about another UID", STATUS, "u2", "wait"],
    ["blocked", { ...STATUS, phase: "blocked", reason: "breaker open" }, "u1", "refused"],
    ["backing off", { ...STATUS, phase: "backoff" }, "u1", "wait"],
    ["absent", undefined, "u1", "wait"],
  ];
  for (const [what, status, uid, verdict] of cases) {
    it(`given a status ${what}, the init client's verdict is ${verdict}`, () =>
      assert.equal(initVerdict(status, uid, "10.0.0.1").verdict, verdict));
  }

  it("summarises failed permissions on one line", () => {
    assert.equal(
      failureSummary([
        { name: "a", provider: "p", state: "failed", reason: "denied" },
        { name: "b", provider: "p", state: "granted" },
      ]),
      "a (p): denied",
    );
  });
});

describe("claim", () => {
  const now = new Date("2026-01-01T00:00:10Z");
  const live = serializeClaim(newClaim("replica-a", new Date("2026-01-01T00:00:00Z"), 30_000));
  const expired = serializeClaim(newClaim("replica-a", new Date("2026-01-01T00:00:00Z"), 5_000));
  const cases: [string, string | undefined, string, boolean][] = [
    ["no claim", undefined, "replica-b", true],
    ["a live claim of another replica", live, "replica-b", false],
    ["a live claim of its own", live, "replica-a", true],
    ["an expired claim", expired, "replica-b", true],
    ["a malformed claim", "{", "replica-b", true],
  ];
  for (const [what, claim, holder, expected] of cases) {
    it(`given ${what}, ${holder} may claim: ${expected}`, () =>
      assert.equal(mayClaim(claim, holder, now), expected));
  }
  it("names the other live holder", () => {
    assert.equal(otherHolder(live, "replica-b", now), "replica-a");
    assert.equal(otherHolder(expired, "replica-b", now), undefined);
  });
});
