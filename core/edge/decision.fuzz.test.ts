// The decision on generated nodes: peers (and whoever else can write a Node's annotations) are
// hostile, so every annotation takes plausible and broken values, long ones too. Whatever they
// write, the decision is made without a throw, its words stay short, and a node is protected
// only when the preconditions hold, checked here by code of its own (not the decision's readers).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { protectNode } from "./decision";
import type { Node } from "./types";
import { pick, seededRandom } from "../../test/harness/generate";
import {
  EDGE_AUTONOMY_ANNOTATION,
  EDGE_HEALTH_ANNOTATION,
  EDGE_MAX_UNKNOWN_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
  EDGE_VOTE_DECIDED_AT_ANNOTATION,
  EDGE_VOTE_VALID_UNTIL_ANNOTATION,
} from "../names";

const NOW = Date.parse("2026-12-07T12:00:00.000Z");
const MINUTE = 60_000;

function times(random: () => number): string[] {
  const near = (ms: number) => new Date(NOW + ms).toISOString();
  return [
    near(-5 * MINUTE),
    near(-30_000),
    near(30_000),
    near(2 * MINUTE),
    near(20 * MINUTE),
    near(Math.floor((random() - 0.5) * 40 * MINUTE)),
    near(0).replace(".000Z", "Z"),
    "2026-02-31T00:00:00Z",
    "2026-12-07T12:01:00+01:00",
    "2026-12-07 12:01:00Z",
    "9999-12-31T23:59:59Z",
    "0",
    "",
    "x".repeat(100_000),
  ];
}

const BOOLS = ["true", "false", "True", "TRUE", " true", "yes", "no", "1", "", "x".repeat(50_000)];
const SECONDS = [
  "0",
  "1",
  "300",
  "86400",
  "-1",
  "1e9",
  "1.5",
  "0x10",
  "",
  " 300",
  "x".repeat(9000),
];
const STATUSES = ["True", "False", "Unknown", "unknown", ""];

function maybe<T>(random: () => number, value: () => T): T | undefined {
  return random() < 0.5 ? value() : undefined;
}

function randomNode(random: () => number): Node {
  const annotations: Record<string, string> = {};
  const set = (key: string, value: string | undefined) => {
    if (value !== undefined) annotations[key] = value;
  };
  set(
    EDGE_HEALTH_ANNOTATION,
    random() < 0.8 ? pick(random, BOOLS.slice(0, 3)) : pick(random, BOOLS),
  );
  set(EDGE_UNHEALTHY_ANNOTATION, random() < 0.15 ? pick(random, ["yes", "no", ""]) : undefined);
  set(
    EDGE_VOTE_DECIDED_AT_ANNOTATION,
    maybe(random, () => pick(random, times(random))) ?? times(random)[1],
  );
  set(EDGE_VOTE_VALID_UNTIL_ANNOTATION, random() < 0.85 ? pick(random, times(random)) : undefined);
  set(
    EDGE_AUTONOMY_ANNOTATION,
    maybe(random, () => pick(random, [...BOOLS, ...SECONDS])),
  );
  set(
    EDGE_MAX_UNKNOWN_ANNOTATION,
    maybe(random, () => pick(random, SECONDS)),
  );
  const ready =
    random() < 0.1
      ? []
      : [
          {
            type: "Ready",
            status: random() < 0.7 ? "Unknown" : pick(random, STATUSES),
            // metav1.Time: the API server accepts RFC 3339 only, so no broken values here.
            lastTransitionTime: pick(random, times(random).slice(0, 7)),
          },
        ];
  return { metadata: { name: "edge-1", annotations }, status: { conditions: ready } } as Node;
}

/** An RFC 3339 UTC time as the daemons write it, read by this test alone; undefined otherwise. */
function strictTime(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.length > 40 || !raw.endsWith("Z") || !raw.includes("T"))
    return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== raw.slice(0, 19)
    ? undefined
    : ms;
}

describe("protectNode: generated nodes", () => {
  it("decides 20 000 without a throw, in short words, protecting only a node whose fresh healthy vote and bounded Unknown say so", () => {
    const random = seededRandom(1207);
    let protectedCount = 0;
    for (let n = 0; n < 20_000; n++) {
      const node = randomNode(random);
      const groupSize = pick(random, [undefined, 0, 1, 2, 3, 5]);
      const decision = protectNode({
        node,
        now: new Date(NOW),
        defaultMaxUnknownMs: 5 * MINUTE,
        ...(groupSize === undefined ? {} : { groupSize }),
      });
      for (const words of [decision.reason, ...decision.warnings])
        assert.ok(words.length < 1_000, `${words.length} characters: ${words.slice(0, 200)}`);
      if (!decision.protect) continue;
      protectedCount++;
      const a = node.metadata?.annotations ?? {};
      const ready = node.status?.conditions?.find(c => c.type === "Ready");
      const decided = strictTime(a[EDGE_VOTE_DECIDED_AT_ANNOTATION]);
      const until = strictTime(a[EDGE_VOTE_VALID_UNTIL_ANNOTATION]);
      const since = Date.parse(String(ready?.lastTransitionTime));
      const why = JSON.stringify({
        a: Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.slice(0, 60)])),
        ready,
        decision,
      });
      assert.equal(ready?.status, "Unknown", why);
      assert.equal(a[EDGE_HEALTH_ANNOTATION], "true", why);
      assert.equal(a[EDGE_UNHEALTHY_ANNOTATION], undefined, why);
      assert.ok(decided !== undefined && until !== undefined && !Number.isNaN(since), why);
      assert.ok(until > NOW && decided <= NOW + MINUTE && until - decided <= 10 * MINUTE, why);
      assert.ok(groupSize === undefined || groupSize >= 2, why);
      assert.ok(a[EDGE_AUTONOMY_ANNOTATION] !== "false", why);
      assert.ok(
        (decision.protectUntilMs ?? 0) > NOW && (decision.protectUntilMs ?? 0) <= until,
        why,
      );
    }
    // The generator reaches protection often, and refusal more often.
    assert.ok(protectedCount > 100 && protectedCount < 10_000, `protected ${protectedCount}`);
  });
});
