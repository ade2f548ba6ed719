import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EDGE_ZONE_LABEL } from "../names";
import type { Node } from "./types";
import { MAX_UNKNOWN_SECONDS_LIMIT, parseZoneConfig, votingGroup, type ZoneConfig } from "./zone";

describe('parseZoneConfig: SuperEdge\'s reading (the key is compared with "false")', () => {
  const cases: [string, Record<string, string> | undefined, ZoneConfig][] = [
    ["no ConfigMap", undefined, { taintZoneAdmission: false }],
    ["a ConfigMap without data", {}, { taintZoneAdmission: true }],
    ["TaintZoneAdmission true", { TaintZoneAdmission: "true" }, { taintZoneAdmission: true }],
    ["TaintZoneAdmission false", { TaintZoneAdmission: "false" }, { taintZoneAdmission: false }],
    ["TaintZoneAdmission True", { TaintZoneAdmission: "True" }, { taintZoneAdmission: true }],
    ["TaintZoneAdmission False", { TaintZoneAdmission: "False" }, { taintZoneAdmission: true }],
    ["TaintZoneAdmission 0", { TaintZoneAdmission: "0" }, { taintZoneAdmission: true }],
    ["TaintZoneAdmission empty", { TaintZoneAdmission: "" }, { taintZoneAdmission: true }],
    ["TaintZoneAdmission ' false'", { TaintZoneAdmission: " false" }, { taintZoneAdmission: true }],
    [
      "MaxUnknownSeconds 600",
      { TaintZoneAdmission: "true", MaxUnknownSeconds: "600" },
      { taintZoneAdmission: true, maxUnknownSeconds: 600 },
    ],
    [
      "MaxUnknownSeconds 0 with zones off",
      { TaintZoneAdmission: "false", MaxUnknownSeconds: "0" },
      { taintZoneAdmission: false, maxUnknownSeconds: 0 },
    ],
    ["an unrelated key", { other: "x" }, { taintZoneAdmission: true }],
  ];
  for (const [title, data, expected] of cases) {
    it(`given ${title}, returns ${JSON.stringify(expected)}`, () => {
      const result = parseZoneConfig(data);
      assert.ok(result.ok);
      assert.deepEqual(result.value, expected);
    });
  }

  const badLimits: [string, string][] = [
    ["10m", "must be a whole number of seconds"],
    ["-1", "must be a whole number of seconds"],
    [String(MAX_UNKNOWN_SECONDS_LIMIT + 1), `must be at most ${MAX_UNKNOWN_SECONDS_LIMIT}`],
  ];
  for (const [value, message] of badLimits) {
    it(`given MaxUnknownSeconds ${value}, keeps the zones and ignores the limit, naming the key`, () => {
      const result = parseZoneConfig({ TaintZoneAdmission: "true", MaxUnknownSeconds: value });
      assert.ok(result.ok);
      assert.equal(result.value.taintZoneAdmission, true);
      assert.equal(result.value.maxUnknownSeconds, undefined);
      assert.match(
        result.value.warnings?.[0] ?? "",
        new RegExp(`^data\\.MaxUnknownSeconds ${message}`),
      );
    });
  }
});

describe("votingGroup", () => {
  const node = (name: string, labels: Record<string, string> = {}): Node => ({
    metadata: { name, labels },
  });
  const master = node("m", { "node-role.kubernetes.io/master": "" });
  const cp = node("cp", { "node-role.kubernetes.io/control-plane": "" });
  const a1 = node("a1", { [EDGE_ZONE_LABEL]: "a" });
  const a2 = node("a2", { [EDGE_ZONE_LABEL]: "a" });
  const b1 = node("b1", { [EDGE_ZONE_LABEL]: "b" });
  const loose = node("loose");
  const all = [master, cp, a1, a2, b1, loose];
  const names = (nodes: Node[]) => nodes.map(n => n.metadata?.name);

  const cases: [string, Node, ZoneConfig | undefined, (string | undefined)[]][] = [
    ["no ConfigMap", a1, undefined, ["a1", "a2", "b1", "loose"]],
    ["zones off", b1, { taintZoneAdmission: false }, ["a1", "a2", "b1", "loose"]],
    ["zones on, zone a", a1, { taintZoneAdmission: true }, ["a1", "a2"]],
    ["zones on, zone b of one node", b1, { taintZoneAdmission: true }, ["b1"]],
    ["zones on, a node without the label", loose, { taintZoneAdmission: true }, ["loose"]],
    ["a master node", master, undefined, []],
    ["a control-plane node", cp, { taintZoneAdmission: true }, []],
  ];
  for (const [title, target, config, expected] of cases) {
    it(`given ${title}, returns [${expected.join(", ")}]`, () => {
      assert.deepEqual(names(votingGroup({ node: target, nodes: all, config })), expected);
    });
  }
});
