import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PERMISSION_GRANT_ANNOTATION, POD_PERMISSION_FINALIZER } from "../names";
import {
  finalizerRemovalPatch,
  revocationPlan,
  type JsonPatchOp,
  type RevocationPlan,
} from "./finalizer";
import { serializeGrantRecord, type GrantRecord } from "./grant-record";
import type { PermissionPod } from "./pod";

const F = POD_PERMISSION_FINALIZER;

describe("finalizerRemovalPatch", () => {
  const cases: [string, string[] | undefined, JsonPatchOp[] | undefined][] = [
    ["no finalizers", undefined, undefined],
    ["an empty list", [], undefined],
    ["only other finalizers", ["batch.kubernetes.io/job-tracking"], undefined],
    [
      "ours alone",
      [F],
      [
        { op: "test", path: "/metadata/finalizers/0", value: F },
        { op: "remove", path: "/metadata/finalizers/0" },
      ],
    ],
    [
      "ours after another",
      ["batch.kubernetes.io/job-tracking", F],
      [
        { op: "test", path: "/metadata/finalizers/1", value: F },
        { op: "remove", path: "/metadata/finalizers/1" },
      ],
    ],
    [
      "ours twice",
      [F, "x/y", F],
      [
        { op: "test", path: "/metadata/finalizers/2", value: F },
        { op: "remove", path: "/metadata/finalizers/2" },
        { op: "test", path: "/metadata/finalizers/0", value: F },
        { op: "remove", path: "/metadata/finalizers/0" },
      ],
    ],
  ];
  for (const [title, finalizers, expected] of cases) {
    it(`given ${title}, returns ${expected ? `${expected.length} ops` : "undefined"}`, () => {
      assert.deepEqual(finalizerRemovalPatch(finalizers), expected);
    });
  }
});

const UID = "6f1c2b1e-3f0a-4a57-9a51-0d7f3c7e2a10";
const record: GrantRecord = {
  ip: "10.244.1.17",
  uid: UID,
  group: "db-readers",
  permissions: [
    { name: "call-billing", provider: "authz", params: { resource: "billing", action: "read" } },
  ],
  grantedAt: "2025-05-01T10:00:00Z",
};
const DELETED = "2025-05-01T12:00:00Z";
const MINUTE = 60_000;
const DEADLINE = 10 * MINUTE;

function terminating(
  annotations: Record<string, string> = {},
  extra: Partial<PermissionPod["metadata"]> = {},
): PermissionPod {
  return {
    metadata: {
      name: "web-1",
      uid: UID,
      deletionTimestamp: DELETED,
      finalizers: ["batch.kubernetes.io/job-tracking", F],
      annotations,
      ...extra,
    },
    // The IP now belongs to someone else's pod; the record's is the one to revoke.
    status: { podIP: "10.244.9.9" },
  };
}
const granted = { [PERMISSION_GRANT_ANNOTATION]: serializeGrantRecord(record) };

function at(offsetMs: number): Date {
  return new Date(Date.parse(DELETED) + offsetMs);
}

describe("revocationPlan", () => {
  const cases: [string, PermissionPod, Date, RevocationPlan["action"], RegExp | undefined][] = [
    [
      "a pod not being deleted",
      { metadata: { finalizers: [F], annotations: granted } },
      at(0),
      "none",
      /not being deleted/,
    ],
    [
      "a terminating pod without our finalizer",
      terminating(granted, { finalizers: ["x/y"] }),
      at(0),
      "none",
      /no stke\.io\/podpermission-protection finalizer/,
    ],
    [
      "a terminating pod that was never granted",
      terminating(),
      at(0),
      "release",
      /^never granted$/,
    ],
    [
      "a malformed grant record",
      terminating({ [PERMISSION_GRANT_ANNOTATION]: "{not json" }),
      at(0),
      "release-invalid-record",
      /permission\.bulwark\.dev\/grant"\]: is not JSON/,
    ],
    [
      "a record without an IP",
      terminating({ [PERMISSION_GRANT_ANNOTATION]: JSON.stringify({ ...record, ip: undefined }) }),
      at(0),
      "release-invalid-record",
      /grant"\]\.ip: /,
    ],
    [
      "another pod's record",
      terminating(granted, { uid: "other-uid" }),
      at(0),
      "release-invalid-record",
      /records pod UID 6f1c.*not this pod.s other-uid \(copied/,
    ],
    ["a granted pod inside the deadline", terminating(granted), at(DEADLINE), "revoke", undefined],
    [
      "a granted pod still in its grace period",
      terminating(granted),
      at(-30_000),
      "revoke",
      undefined,
    ],
    [
      "a granted pod past the deadline",
      terminating(granted),
      at(DEADLINE + 1),
      "force-release",
      /grants to 10\.244\.1\.17 \(pod UID 6f1c.*\) were not revoked within 600s/,
    ],
    [
      "a never-granted pod past the deadline",
      terminating(),
      at(DEADLINE * 3),
      "release",
      /never granted/,
    ],
    [
      "a Date deletionTimestamp past the deadline",
      terminating(granted, { deletionTimestamp: new Date(DELETED) }),
      at(DEADLINE + 1),
      "force-release",
      /not revoked/,
    ],
  ];
  for (const [title, pod, now, action, reason] of cases) {
    it(`given ${title}, returns ${action}`, () => {
      const plan = revocationPlan(pod, now, DEADLINE);
      assert.equal(plan.action, action, JSON.stringify(plan));
      if (reason) assert.match("reason" in plan ? plan.reason : "", reason);
    });
  }

  it("given a granted pod whose IP was reused, returns the record's IP and UID, not the current IP", () => {
    const plan = revocationPlan(terminating(granted), at(0), DEADLINE);
    assert.deepEqual(plan, { action: "revoke", record });
  });

  it("given a pod past the deadline, returns the record for the Warning Event", () => {
    const plan = revocationPlan(terminating(granted), at(DEADLINE * 2), DEADLINE);
    assert.deepEqual(plan.action === "force-release" ? plan.record : undefined, record);
  });
});
