import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  EDGE_HEALTH_ANNOTATION,
  EDGE_MAX_UNKNOWN_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
  EDGE_VOTE_DECIDED_AT_ANNOTATION,
  EDGE_VOTE_VALID_UNTIL_ANNOTATION,
} from "../names";
import { autonomyLimit, protectionByName, protectNode, type DecisionRule } from "./decision";
import type { Node } from "./types";
import { voteAnnotations } from "./vote";
import type { ZoneConfig } from "./zone";

const T0 = Date.parse("2024-05-01T10:00:00Z");
const MIN = 60_000;
const DEFAULT = 10 * MIN;

type Link = "up" | "notready" | "down";
type VoteAnn = "healthy" | "unhealthy" | "nodeunhealth" | "none";

/** A term decided 10 s before `nowMs` and valid for 3 checks of 10 s. */
const termAround = (nowMs: number) => ({
  decidedAtMs: nowMs - 10_000,
  validUntilMs: nowMs + 20_000,
});

function edgeNode(options: {
  link: Link;
  vote: VoteAnn;
  annotations?: Record<string, string>;
  transition?: string | Date | null;
  /** When the vote is read: its term is fresh then. */
  nowMs?: number;
}): Node {
  const term = termAround(options.nowMs ?? T0);
  const annotations: Record<string, string> = {};
  if (options.vote === "healthy") Object.assign(annotations, voteAnnotations("true", term));
  if (options.vote === "unhealthy") Object.assign(annotations, voteAnnotations("false", term));
  Object.assign(annotations, options.annotations);
  if (options.vote === "nodeunhealth") annotations[EDGE_UNHEALTHY_ANNOTATION] = "yes";
  const status = { up: "True", notready: "False", down: "Unknown" }[options.link];
  const lastTransitionTime =
    options.transition === null ? undefined : (options.transition ?? new Date(T0));
  return {
    metadata: { name: "edge-1", annotations },
    status: { conditions: [{ type: "Ready", status, lastTransitionTime }] },
  };
}

describe("protectNode: the decision table", () => {
  // [cloud link, vote, minutes Unknown, group size, expected rule]
  const table: [Link, VoteAnn, number, number | undefined, DecisionRule][] = [
    ["up", "healthy", 1, undefined, "not-unknown"],
    ["up", "unhealthy", 1, undefined, "not-unknown"],
    ["up", "none", 1, undefined, "not-unknown"],
    ["up", "healthy", 60, undefined, "not-unknown"],
    ["notready", "healthy", 1, undefined, "not-unknown"],
    ["down", "healthy", 0, undefined, "protected"],
    ["down", "healthy", 9, undefined, "protected"],
    ["down", "healthy", 10, undefined, "over-limit"],
    ["down", "healthy", 60, undefined, "over-limit"],
    ["down", "unhealthy", 1, undefined, "vote-unhealthy"],
    ["down", "unhealthy", 60, undefined, "vote-unhealthy"],
    ["down", "nodeunhealth", 1, undefined, "vote-unhealthy"],
    ["down", "none", 1, undefined, "vote-none"],
    ["down", "none", 60, undefined, "vote-none"],
    // Groups: alone (or control plane) never voted on, so a healthy annotation is stale.
    ["down", "healthy", 1, 0, "group-too-small"],
    ["down", "healthy", 1, 1, "group-too-small"],
    ["down", "none", 1, 1, "vote-none"],
    // Two nodes: "true" needs both; as recorded within its term, it protects.
    ["down", "healthy", 1, 2, "protected"],
    ["down", "unhealthy", 1, 2, "vote-unhealthy"],
    ["down", "healthy", 11, 2, "over-limit"],
    ["down", "healthy", 1, 5, "protected"],
  ];
  for (const [link, vote, minutes, groupSize, rule] of table) {
    const group = groupSize === undefined ? "" : `, group of ${groupSize}`;
    it(`given link ${link}, vote ${vote}, ${minutes} min Unknown${group}, returns ${rule}`, () => {
      const nowMs = T0 + minutes * MIN;
      const decision = protectNode({
        node: edgeNode({ link, vote, nowMs }),
        now: new Date(nowMs),
        defaultMaxUnknownMs: DEFAULT,
        groupSize,
      });
      assert.equal(decision.rule, rule);
      assert.equal(decision.protect, rule === "protected");
      // Protection ends with the limit or the term, whichever is first.
      const until = Math.min(T0 + DEFAULT, termAround(nowMs).validUntilMs);
      assert.equal(decision.protectUntilMs, rule === "protected" ? until : undefined);
    });
  }

  it("given no Ready condition, returns no-ready-condition", () => {
    const decision = protectNode({ node: {}, now: new Date(T0), defaultMaxUnknownMs: DEFAULT });
    assert.deepEqual([decision.protect, decision.rule], [false, "no-ready-condition"]);
  });
  it("given Unknown without lastTransitionTime, returns no-transition-time", () => {
    const node = edgeNode({ link: "down", vote: "healthy", transition: null });
    const decision = protectNode({ node, now: new Date(T0), defaultMaxUnknownMs: DEFAULT });
    assert.deepEqual([decision.protect, decision.rule], [false, "no-transition-time"]);
  });
  it("given a string lastTransitionTime, returns the same as a Date", () => {
    const node = edgeNode({
      link: "down",
      vote: "healthy",
      transition: "2024-05-01T10:00:00Z",
      nowMs: T0 + MIN,
    });
    const decision = protectNode({ node, now: new Date(T0 + MIN), defaultMaxUnknownMs: DEFAULT });
    assert.equal(decision.rule, "protected");
  });
  it("given a clock behind the transition, returns protected (counted as just Unknown)", () => {
    const node = edgeNode({ link: "down", vote: "healthy" });
    const decision = protectNode({ node, now: new Date(T0 - MIN), defaultMaxUnknownMs: DEFAULT });
    assert.equal(decision.rule, "protected");
  });
  it("given a bad node-health value, returns vote-none with a warning", () => {
    const node = edgeNode({
      link: "down",
      vote: "none",
      annotations: { [EDGE_HEALTH_ANNOTATION]: "yes" },
    });
    const decision = protectNode({ node, now: new Date(T0), defaultMaxUnknownMs: DEFAULT });
    assert.equal(decision.rule, "vote-none");
    assert.equal(decision.warnings.length, 1);
  });
});

describe("protectNode: the vote's term", () => {
  const at = (ms: number) => new Date(ms).toISOString();
  // [what, annotations over a fresh healthy vote at T0 + 1 min, expected rule, reason pattern]
  const cases: [string, Record<string, string | undefined>, DecisionRule, RegExp][] = [
    ["a fresh term", {}, "protected", /voted healthy/],
    [
      "no decision time",
      { [EDGE_VOTE_DECIDED_AT_ANNOTATION]: undefined },
      "vote-stale",
      /decided-at"\] is missing/,
    ],
    [
      "no validity",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: undefined },
      "vote-stale",
      /valid-until"\] is missing/,
    ],
    [
      "an expired term",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: at(T0 + MIN) },
      "vote-stale",
      /expired at/,
    ],
    [
      "a term ending before its decision",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: at(T0 + MIN - 20_000) },
      "vote-stale",
      /not after its decision/,
    ],
    [
      "a decision in the future",
      {
        [EDGE_VOTE_DECIDED_AT_ANNOTATION]: at(T0 + 3 * MIN),
        [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: at(T0 + 4 * MIN),
      },
      "vote-stale",
      /in the future/,
    ],
    [
      "a decision within the clock skew",
      {
        [EDGE_VOTE_DECIDED_AT_ANNOTATION]: at(T0 + MIN + 30_000),
        [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: at(T0 + 2 * MIN),
      },
      "protected",
      /voted healthy/,
    ],
    [
      "a term longer than allowed",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: at(T0 + 24 * 60 * MIN) },
      "vote-stale",
      /longer than the 600s allowed/,
    ],
    [
      "a time with an offset",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: "2024-05-01T12:00:00+02:00" },
      "vote-stale",
      /must be an RFC 3339 time in UTC/,
    ],
    [
      "a date that does not exist",
      { [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: "2024-02-31T10:00:00Z" },
      "vote-stale",
      /is not a valid date/,
    ],
    [
      "not a time",
      { [EDGE_VOTE_DECIDED_AT_ANNOTATION]: "yesterday" },
      "vote-stale",
      /decided-at"\] must be/,
    ],
  ];
  for (const [what, overrides, rule, reason] of cases) {
    it(`given a healthy vote with ${what}, returns ${rule}`, () => {
      const node = edgeNode({ link: "down", vote: "healthy", nowMs: T0 + MIN });
      const annotations = { ...node.metadata?.annotations } as Record<string, string>;
      for (const [key, value] of Object.entries(overrides)) {
        if (value === undefined) delete annotations[key];
        else annotations[key] = value;
      }
      const decision = protectNode({
        node: { ...node, metadata: { ...node.metadata, annotations } },
        now: new Date(T0 + MIN),
        defaultMaxUnknownMs: DEFAULT,
      });
      assert.equal(decision.rule, rule);
      assert.match(decision.reason, reason);
    });
  }
  it("given an unhealthy vote whose term has expired, returns vote-unhealthy (it only evicts)", () => {
    const node = edgeNode({ link: "down", vote: "unhealthy", nowMs: T0 });
    const decision = protectNode({
      node,
      now: new Date(T0 + 60 * MIN),
      defaultMaxUnknownMs: DEFAULT,
    });
    assert.equal(decision.rule, "vote-unhealthy");
  });
  it("given the term ending before the limit, returns protection until the term's end", () => {
    const node = edgeNode({ link: "down", vote: "healthy", nowMs: T0 + MIN });
    const decision = protectNode({ node, now: new Date(T0 + MIN), defaultMaxUnknownMs: DEFAULT });
    assert.equal(decision.protectUntilMs, T0 + MIN + 20_000);
  });
});

describe("autonomyLimit precedence", () => {
  const zone: ZoneConfig = { taintZoneAdmission: true, maxUnknownSeconds: 300 };
  // [annotation, zone config, expected ms, expected warnings]
  const cases: [string | undefined, ZoneConfig | undefined, number, number][] = [
    [undefined, undefined, DEFAULT, 0],
    [undefined, { taintZoneAdmission: false }, DEFAULT, 0],
    [undefined, zone, 300_000, 0],
    ["120", zone, 120_000, 0],
    ["120", undefined, 120_000, 0],
    ["0", zone, 0, 0],
    ["10m", zone, 300_000, 1],
    ["-5", undefined, DEFAULT, 1],
    ["99999999", zone, 300_000, 1],
  ];
  for (const [annotation, zoneConfig, ms, warnings] of cases) {
    it(`given annotation ${String(annotation)} and ConfigMap ${String(zoneConfig?.maxUnknownSeconds)}, returns ${ms} ms`, () => {
      const annotations: Record<string, string> =
        annotation === undefined ? {} : { [EDGE_MAX_UNKNOWN_ANNOTATION]: annotation };
      const limit = autonomyLimit({
        node: { metadata: { annotations } },
        zoneConfig,
        defaultMaxUnknownMs: DEFAULT,
      });
      assert.equal(limit.ms, ms);
      assert.equal(limit.warnings.length, warnings);
    });
  }

  it("given annotation 0 on a voted-healthy Unknown node, returns over-limit (no autonomy)", () => {
    const node = edgeNode({
      link: "down",
      vote: "healthy",
      annotations: { [EDGE_MAX_UNKNOWN_ANNOTATION]: "0" },
    });
    assert.equal(
      protectNode({ node, now: new Date(T0), defaultMaxUnknownMs: DEFAULT }).rule,
      "over-limit",
    );
  });
  it("given a node annotation longer than the ConfigMap's, returns protected past the ConfigMap's limit", () => {
    const node = edgeNode({
      link: "down",
      vote: "healthy",
      annotations: { [EDGE_MAX_UNKNOWN_ANNOTATION]: "3600" },
      nowMs: T0 + 30 * MIN,
    });
    const decision = protectNode({
      node,
      now: new Date(T0 + 30 * MIN),
      zoneConfig: zone,
      defaultMaxUnknownMs: DEFAULT,
    });
    assert.equal(decision.rule, "protected");
  });
});

describe("protectionByName", () => {
  it("given repeated names, returns memoized decisions and looks each node up once", () => {
    const lookups: string[] = [];
    const nodes: Record<string, Node> = {
      a: edgeNode({ link: "down", vote: "healthy", nowMs: T0 + MIN }),
    };
    const byName = protectionByName({
      node: name => {
        lookups.push(name);
        return nodes[name];
      },
      now: new Date(T0 + MIN),
      defaultMaxUnknownMs: DEFAULT,
      groupSize: () => 3,
    });
    assert.equal(byName("a")?.decision.protect, true);
    assert.equal(byName("a")?.decision.protect, true);
    assert.equal(byName("missing"), undefined);
    assert.equal(byName("missing"), undefined);
    assert.deepEqual(lookups, ["a", "missing"]);
  });
  it("given a group size of one from the caller, returns not protected", () => {
    const byName = protectionByName({
      node: () => edgeNode({ link: "down", vote: "healthy" }),
      now: new Date(T0),
      defaultMaxUnknownMs: DEFAULT,
      groupSize: () => 1,
    });
    assert.equal(byName("a")?.decision.rule, "group-too-small");
  });
});

describe("protectNode with SuperEdge's daemons voting", () => {
  // [group size, live witnesses, annotations, rule]
  const table: [number, number, Record<string, string>, DecisionRule][] = [
    [2, 1, {}, "protected"],
    [2, 0, {}, "vote-stale"],
    [3, 1, {}, "protected"],
    [5, 1, {}, "vote-stale"],
    [5, 2, {}, "protected"],
    [5, 4, { [EDGE_UNHEALTHY_ANNOTATION]: "yes" }, "vote-unhealthy"],
    [1, 0, {}, "group-too-small"],
  ];
  for (const [groupSize, witnesses, annotations, rule] of table) {
    it(`given a group of ${groupSize} with ${witnesses} live witnesses and ${JSON.stringify(annotations)}, returns ${rule}`, () => {
      const node: Node = {
        metadata: { name: "edge-1", annotations },
        status: {
          conditions: [{ type: "Ready", status: "Unknown", lastTransitionTime: new Date(T0) }],
        },
      };
      const decision = protectNode({
        node,
        now: new Date(T0 + MIN),
        defaultMaxUnknownMs: DEFAULT,
        groupSize,
        superEdgeWitnesses: witnesses,
      });
      assert.equal(decision.rule, rule);
    });
  }
});
