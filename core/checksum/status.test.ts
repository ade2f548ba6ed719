import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { desiredStatus, isConsistent, type Observation } from "./status";

const T0 = new Date("2026-01-01T00:00:00Z");
const T1 = new Date("2026-01-01T00:05:00Z");

const matched: Observation = {
  kind: "ingress",
  observedChecksum: "a".repeat(32),
  publishedChecksum: "a".repeat(32),
  objectCount: 3,
  publishedCount: 3,
  publishedIdsHash: true,
  missing: [],
  unexpected: [],
  missingCount: 0,
  unexpectedCount: 0,
};

describe("desiredStatus", () => {
  it("given a matching checksum, returns Consistent=True Matched with the counts", () => {
    const status = desiredStatus(matched, 2, undefined, T0);
    assert.deepEqual(status.conditions, [
      {
        type: "Consistent",
        status: "True",
        reason: "Matched",
        message: "the cluster's 3 Ingress objects hash to spec.checksum",
        lastTransitionTime: T0.toISOString(),
        observedGeneration: 2,
      },
    ]);
    assert.equal(status.objectCount, 3);
    assert.equal(isConsistent(status), true);
  });

  it("given a mismatch, names the first missing and unexpected IDs and caps the lists at 20", () => {
    const missing = Array.from({ length: 25 }, (_, i) => `${i}-1`);
    const status = desiredStatus(
      {
        ...matched,
        observedChecksum: "b".repeat(32),
        missing,
        missingCount: 25,
        unexpected: ["99-2"],
        unexpectedCount: 1,
      },
      2,
      undefined,
      T0,
    );
    assert.equal(isConsistent(status), false);
    assert.equal(status.conditions?.[0]?.reason, "Mismatch");
    assert.match(
      status.conditions?.[0]?.message ?? "",
      /25 published IDs missing, 1 unexpected; first missing: 0-1; first unexpected: 99-2/,
    );
    assert.equal(status.missing?.length, 20);
    assert.equal(status.missingCount, 25);
  });

  it("keeps lastTransitionTime while the status does not change, and moves it when it does", () => {
    const first = desiredStatus(matched, 1, undefined, T0);
    assert.equal(
      desiredStatus(matched, 1, first, T1).conditions?.[0]?.lastTransitionTime,
      T0.toISOString(),
    );
    const flipped = desiredStatus({ ...matched, observedChecksum: "c".repeat(32) }, 1, first, T1);
    assert.equal(flipped.conditions?.[0]?.lastTransitionTime, T1.toISOString());
  });

  const falseCases: [string, Partial<Observation>, string][] = [
    [
      "an invalid spec",
      { invalidSpec: "spec.checksum: must be 32 lowercase hex digits" },
      "InvalidSpec",
    ],
    ["no checksum", { publishedChecksum: undefined }, "NoChecksum"],
    [
      "ids that do not hash to the checksum",
      { publishedIdsHash: false },
      "PublishedIdsInconsistent",
    ],
  ];
  for (const [title, change, reason] of falseCases) {
    it(`given ${title}, returns Consistent=False ${reason}`, () => {
      const status = desiredStatus({ ...matched, ...change }, 1, undefined, T0);
      assert.equal(status.conditions?.[0]?.status, "False");
      assert.equal(status.conditions?.[0]?.reason, reason);
    });
  }

  it("given a mismatch against an object without ids, says the objects cannot be named", () => {
    const status = desiredStatus(
      { ...matched, observedChecksum: "d".repeat(32), publishedCount: undefined },
      1,
      undefined,
      T0,
    );
    assert.match(status.conditions?.[0]?.message ?? "", /spec\.ids is empty/);
  });
});

describe("desiredStatus: what differs and what the mode does", () => {
  const mismatch: Observation = {
    ...matched,
    observedChecksum: "b".repeat(32),
    missing: ["4-1", "5-1", "6-1", "7-1"],
    missingCount: 4,
    unexpected: ["9-2"],
    unexpectedCount: 1,
    unexpectedObjects: ["shop/web-9"],
  };

  it("names the unexpected objects and the missing IDs in one short line", () => {
    const status = desiredStatus(mismatch, 1, undefined, T0);
    assert.equal(status.differing, "unexpected shop/web-9; missing 4-1, 5-1, 6-1 (+1 more)");
  });

  it("in content mode names objects from the IDs themselves", () => {
    const digest = "c".repeat(64);
    const status = desiredStatus(
      {
        ...mismatch,
        missing: [`shop/api@${digest}`],
        missingCount: 1,
        unexpected: [`shop/web@${digest}`],
        unexpectedObjects: undefined,
      },
      1,
      undefined,
      T0,
    );
    assert.equal(status.differing, "unexpected shop/web; missing shop/api");
  });

  it("says nothing differs on a match", () => {
    assert.equal(desiredStatus(matched, 1, undefined, T0).differing, undefined);
  });

  it("says what a mismatch does to traffic in each mode, and records the mode", () => {
    const says = {
      enforce: /\(enforce: the gateway keeps serving its last good configuration\)$/,
      observe: /\(observe: enforcing would refuse this; the gateway serves it\)$/,
      off: /\(the guard is off: the gateway serves it\)$/,
    } as const;
    for (const mode of ["enforce", "observe", "off"] as const) {
      const status = desiredStatus({ ...mismatch, mode }, 1, undefined, T0);
      assert.match(status.conditions?.[0]?.message ?? "", says[mode]);
      assert.equal(status.enforcement, mode);
    }
  });
});

describe("desiredStatus: signatures required", () => {
  it("says Unsigned or BadSignature, and that the guard ignores the object, before anything else", () => {
    for (const reason of ["Unsigned", "BadSignature"] as const) {
      const observation: Observation = {
        ...matched,
        publishedChecksum: undefined,
        signatureProblem: { reason, message: "spec.signature is not set; signatures are required" },
      };
      const [condition] = desiredStatus(observation, 1, undefined, T0).conditions ?? [];
      assert.equal(condition?.status, "False");
      assert.equal(condition?.reason, reason);
      assert.match(
        condition?.message ?? "",
        /signatures are required: the guard ignores this object$/,
      );
    }
  });
});
