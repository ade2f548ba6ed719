import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EDGE_HEALTH_ANNOTATION, EDGE_UNHEALTHY_ANNOTATION } from "../names";
import { nodeVote, readVote, type Vote } from "./vote";

describe("nodeVote and readVote", () => {
  const cases: [string, Record<string, string> | undefined, Vote, number][] = [
    ["no annotations", undefined, "none", 0],
    ["node-health true", { [EDGE_HEALTH_ANNOTATION]: "true" }, "healthy", 0],
    ["node-health false", { [EDGE_HEALTH_ANNOTATION]: "false" }, "unhealthy", 0],
    ["node-health True (wrong case)", { [EDGE_HEALTH_ANNOTATION]: "True" }, "none", 1],
    ["node-health empty", { [EDGE_HEALTH_ANNOTATION]: "" }, "none", 1],
    ["nodeunhealth yes", { [EDGE_UNHEALTHY_ANNOTATION]: "yes" }, "unhealthy", 0],
    ["nodeunhealth other value", { [EDGE_UNHEALTHY_ANNOTATION]: "1" }, "unhealthy", 1],
    [
      "nodeunhealth yes and node-health true",
      { [EDGE_UNHEALTHY_ANNOTATION]: "yes", [EDGE_HEALTH_ANNOTATION]: "true" },
      "unhealthy",
      1,
    ],
    [
      "nodeunhealth yes and node-health false",
      { [EDGE_UNHEALTHY_ANNOTATION]: "yes", [EDGE_HEALTH_ANNOTATION]: "false" },
      "unhealthy",
      0,
    ],
    ["unrelated annotations", { "example.com/x": "true" }, "none", 0],
  ];
  for (const [title, annotations, vote, warnings] of cases) {
    it(`given ${title}, returns ${vote} with ${warnings} warning(s)`, () => {
      const node = { metadata: { annotations } };
      const reading = readVote(node);
      assert.equal(reading.vote, vote);
      assert.equal(reading.warnings.length, warnings);
      assert.equal(nodeVote(node), vote);
    });
  }
});
