import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PERMISSION_GRANT_ANNOTATION, POD_PERMISSION_FINALIZER } from "../names";
import { revocationPlan, type RevocationPlan } from "./finalizer";
import type { PermissionPod } from "./pod";

const F = POD_PERMISSION_FINALIZER;

const UID = "6f1c2b1e-3f0a-4a57-9a51-0d7f3c7e2a10";
const DELETED = "2025-05-01T12:00:00Z";
const MINUTE = 60_000;
const DEADLINE = 10 * MINUTE;
// A copied or edited grant record: the plan never reads it.
const edited = {
  [PERMISSION_GRANT_ANNOTATION]: JSON.stringify({ ip: "10.9.9.9", uid: "someone-else" }),
};

function terminating(
  extra: Partial<PermissionPod["metadata"]> = {},
  podIP: string | null = "10.244.1.17",
): PermissionPod {
  return {
    metadata: {
      name: "web-1",
      uid: UID,
      deletionTimestamp: DELETED,
      finalizers: ["batch.kubernetes.io/job-tracking", F],
      annotations: edited,
      ...extra,
    },
    status: podIP === null ? {} : { podIP },
  };
}

function at(offsetMs: number): Date {
  return new Date(Date.parse(DELETED) + offsetMs);
}

describe("revocationPlan", () => {
  const cases: [string, PermissionPod, Date, RevocationPlan["action"], RegExp | undefined][] = [
    [
      "a pod not being deleted",
      { metadata: { finalizers: [F] }, status: { podIP: "10.0.0.1" } },
      at(0),
      "none",
      /not being deleted/,
    ],
    [
      "a terminating pod without our finalizer",
      terminating({ finalizers: ["x/y"] }),
      at(0),
      "none",
      /no stke\.io\/podpermission-protection finalizer/,
    ],
    [
      "a terminating pod that never had an IP",
      terminating({}, null),
      at(0),
      "release",
      /never had an IP/,
    ],
    [
      "a pod that never had an IP, past the deadline",
      terminating({}, null),
      at(DEADLINE * 3),
      "release",
      /never had an IP/,
    ],
    ["a pod with an IP inside the deadline", terminating(), at(DEADLINE), "revoke", undefined],
    ["a pod still in its grace period", terminating(), at(-30_000), "revoke", undefined],
    [
      "a pod without any grant annotation (removed by someone)",
      terminating({ annotations: {} }),
      at(0),
      "revoke",
      undefined,
    ],
    [
      "a pod past the deadline",
      terminating(),
      at(DEADLINE + 1),
      "force-release",
      /pod UID 6f1c.* within 600s .*sweep revokes/,
    ],
    [
      "a Date deletionTimestamp past the deadline",
      terminating({ deletionTimestamp: new Date(DELETED) }),
      at(DEADLINE + 1),
      "force-release",
      /did not confirm/,
    ],
  ];
  for (const [title, pod, now, action, reason] of cases) {
    it(`given ${title}, returns ${action}`, () => {
      const plan = revocationPlan(pod, now, DEADLINE);
      assert.equal(plan.action, action, JSON.stringify(plan));
      if (reason) assert.match("reason" in plan ? plan.reason : "", reason);
    });
  }
});
