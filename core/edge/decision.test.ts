import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  EDGE_HEALTH_ANNOTATION,
  EDGE_MAX_UNKNOWN_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
} from "../names";
import { autonomyLimit, protectionByName, protectNode, type DecisionRule } from "./decision";
import type { Node } from "./types";
import type { ZoneConfig } from "./zone";

const T0 = Date.parse("2024-05-01T10:00:00Z");
const MIN = 60_000;
const DEFAULT = 10 * MIN;

type Link = "up" | "notready" | "down";
type VoteAnn = "healthy" | "unhealthy" | "nodeunhealth" | "none";

function edgeNode(options: {
  link: Link;
  vote: VoteAnn;
  annotations?: Record<string, string>;
  transition?: string | Date | null;
}): Node {
  const annotations: Record<string, string> = { ...options.annotations };
  if (options.vote === "healthy") annotations[EDGE_HEALTH_ANNOTATION] = "true";
  if (options.vote === "unhealthy") annotations[EDGE_HEALTH_ANNOTATION] = "false";
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
    // Two nodes: the single peer's verdict, as recorded, decides.
    ["down", "healthy", 1, 2, "protected"],
    ["down", "unhealthy", 1, 2, "vote-unhealthy"],
    ["down", "healthy", 11, 2, "over-limit"],
    ["down", "healthy", 1, 5, "protected"],
  ];
  for (const [link, vote, minutes, groupSize, rule] of table) {
    const group = groupSize === undefined ? "" : `, group of ${groupSize}`;
    it(`given link ${link}, vote ${vote}, ${minutes} min Unknown${group}, returns ${rule}`, () => {
      const decision = protectNode({
        node: edgeNode({ link, vote }),
        now: new Date(T0 + minutes * MIN),
        defaultMaxUnknownMs: DEFAULT,
        groupSize,
      });
      assert.equal(decision.rule, rule);
      assert.equal(decision.protect, rule === "protected");
      assert.equal(decision.protectUntilMs, rule === "protected" ? T0 + DEFAULT : undefined);
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
    const node = edgeNode({ link: "down", vote: "healthy", transition: "2024-05-01T10:00:00Z" });
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
    const nodes: Record<string, Node> = { a: edgeNode({ link: "down", vote: "healthy" }) };
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
