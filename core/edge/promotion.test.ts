import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { podIneligibility, promotionVerdict } from "./promotion";
import { MINUTE, pod, readyNode, T0, unknownNode } from "./testkit";
import type { Pod } from "./types";

describe("podIneligibility", () => {
  const node = unknownNode("n", "true");
  const cases: [string, Pod, string | undefined][] = [
    [
      "Ready=False set when the node went Unknown",
      pod({ name: "a", node: "n", ready: "False", sinceMs: T0 }),
      undefined,
    ],
    [
      "Ready=False set after the node went Unknown",
      pod({ name: "a", node: "n", ready: "False", sinceMs: T0 + 5_000 }),
      undefined,
    ],
    [
      "Ready=False before the node went Unknown",
      pod({ name: "a", node: "n", ready: "False", sinceMs: T0 - 1_000 }),
      "pod was already not ready before the node went Unknown",
    ],
    [
      "Ready=True (cache lag)",
      pod({ name: "a", node: "n", ready: "True", sinceMs: T0 - MINUTE }),
      undefined,
    ],
    [
      "a terminating pod",
      pod({ name: "a", node: "n", ready: "False", sinceMs: T0, terminating: true }),
      "pod is terminating",
    ],
    [
      "a crash-looping pod",
      pod({ name: "a", node: "n", ready: "False", sinceMs: T0, crashLoop: true }),
      "a container is in CrashLoopBackOff",
    ],
    ["no Ready condition", { metadata: { name: "a" } }, "pod has no Ready=False condition to date"],
    [
      "Ready=False without a time",
      { status: { conditions: [{ type: "Ready", status: "False" }] } },
      "Ready transition times are missing, so readiness before the partition is unknown",
    ],
  ];
  for (const [title, p, expected] of cases) {
    it(`given ${title}, returns ${expected ?? "eligible"}`, () => {
      assert.equal(podIneligibility(p, node), expected);
    });
  }
  it("given Date times (client-node), returns the same as strings", () => {
    const p: Pod = {
      status: {
        conditions: [{ type: "Ready", status: "False", lastTransitionTime: new Date(T0) }],
      },
    };
    assert.equal(podIneligibility(p, node), undefined);
  });
});

describe("promotionVerdict", () => {
  const p = pod({ name: "a", node: "n", ready: "False", sinceMs: T0 + 1_000 });
  const protection = (name: string) =>
    name === "n"
      ? {
          node: unknownNode("n", "true"),
          decision: { protect: true, rule: "protected" as const, reason: "ok", warnings: [] },
        }
      : name === "up"
        ? {
            node: readyNode("up"),
            decision: {
              protect: false,
              rule: "not-unknown" as const,
              reason: "Ready=True",
              warnings: [],
            },
          }
        : undefined;
  const podOf = (ns: string, name: string) => (ns === "ns" && name === "a" ? p : undefined);
  const cases: [
    string,
    {
      nodeName?: string;
      targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string };
    },
    string | true,
  ][] = [
    [
      "a matching address",
      { nodeName: "n", targetRef: { kind: "Pod", name: "a", uid: "uid-a" } },
      true,
    ],
    ["no targetRef", { nodeName: "n" }, "no Pod targetRef"],
    [
      "another namespace",
      { targetRef: { kind: "Pod", name: "a", namespace: "other" } },
      "pod other/a not found",
    ],
    [
      "a different uid",
      { targetRef: { kind: "Pod", name: "a", uid: "x" } },
      "pod ns/a was re-created (uid differs)",
    ],
    [
      "an unprotected node",
      { nodeName: "up", targetRef: { kind: "Pod", name: "a" } },
      "address says node up, pod runs on n",
    ],
  ];
  for (const [title, address, expected] of cases) {
    it(`given ${title}, returns ${expected === true ? "promote" : expected}`, () => {
      const verdict = promotionVerdict({ address, namespace: "ns", pod: podOf, protection });
      assert.equal(verdict.promote ? true : verdict.reason, expected);
    });
  }
  it("given a pod on an unprotected node, returns the decision's reason", () => {
    const onUp = pod({ name: "a", node: "up", ready: "False", sinceMs: T0 });
    const verdict = promotionVerdict({
      address: { targetRef: { kind: "Pod", name: "a" } },
      namespace: "ns",
      pod: () => onUp,
      protection,
    });
    assert.deepEqual(verdict, { promote: false, reason: "node up not protected: Ready=True" });
  });
});
