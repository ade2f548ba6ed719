import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EDGE_HEALTH_ANNOTATION, EDGE_UNHEALTHY_ANNOTATION } from "../names";
import {
  nodeVote,
  readSuperEdgeVote,
  readTerm,
  readVote,
  voteAnnotations,
  type Vote,
} from "./vote";

const NOW = Date.parse("2026-12-04T15:00:00Z");
const FRESH = { decidedAtMs: NOW - 10_000, validUntilMs: NOW + 20_000 };

describe("nodeVote and readVote", () => {
  const cases: [string, Record<string, string> | undefined, Vote, number][] = [
    ["no annotations", undefined, "none", 0],
    ["node-health true with a fresh term", voteAnnotations("true", FRESH), "healthy", 0],
    [
      "node-health true without a term (by hand, an old tool)",
      { [EDGE_HEALTH_ANNOTATION]: "true" },
      "stale",
      0,
    ],
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
      const reading = readVote(node, new Date(NOW));
      assert.equal(reading.vote, vote);
      assert.equal(reading.warnings.length, warnings);
      assert.equal(nodeVote(node, new Date(NOW)), vote);
    });
  }
  it("given the annotations a daemon writes, returns them read back as the same term", () => {
    const annotations = voteAnnotations("true", FRESH);
    assert.deepEqual(Object.keys(annotations).sort(), [
      "edge.bulwark.dev/vote-decided-at",
      "edge.bulwark.dev/vote-valid-until",
      EDGE_HEALTH_ANNOTATION,
    ]);
    assert.deepEqual(readTerm({ metadata: { annotations } }), { term: FRESH });
  });
  it("given a fresh vote read after its term, returns stale naming when it expired", () => {
    const node = { metadata: { annotations: voteAnnotations("true", FRESH) } };
    const reading = readVote(node, new Date(FRESH.validUntilMs));
    assert.equal(reading.vote, "stale");
    assert.match(reading.staleReason ?? "", /expired at 2026-12-04T15:00:20.000Z/);
  });
  it("given a 100 KiB term a peer wrote, reads it as stale quoting at most 100 characters", () => {
    const annotations = {
      ...voteAnnotations("true", FRESH),
      "edge.bulwark.dev/vote-valid-until": "9".repeat(100 * 1024),
    };
    const reading = readVote({ metadata: { annotations } }, new Date(NOW));
    assert.equal(reading.vote, "stale");
    assert.ok((reading.staleReason ?? "").length < 400, reading.staleReason?.slice(0, 400));
    assert.match(reading.staleReason ?? "", /got "9{100}…"$/);
  });
});

describe("readSuperEdgeVote: SuperEdge's daemons, fresh while their peers are live", () => {
  const cases: [string, Record<string, string>, number, number, Vote][] = [
    ["no annotation, enough live peers", {}, 1, 1, "healthy"],
    ["no annotation, more live peers than needed", {}, 3, 2, "healthy"],
    ["no annotation, too few live peers", {}, 1, 2, "stale"],
    ["no annotation, no live peer", {}, 0, 1, "stale"],
    ["nodeunhealth yes", { [EDGE_UNHEALTHY_ANNOTATION]: "yes" }, 3, 1, "unhealthy"],
    ["node-health false", { [EDGE_HEALTH_ANNOTATION]: "false" }, 3, 1, "unhealthy"],
    ["node-health true without a term", { [EDGE_HEALTH_ANNOTATION]: "true" }, 1, 1, "healthy"],
  ];
  for (const [title, annotations, live, needed, vote] of cases) {
    it(`given ${title} (${live} live of ${needed} needed), returns ${vote}`, () => {
      const reading = readSuperEdgeVote({ metadata: { annotations } }, { live, needed });
      assert.equal(reading.vote, vote);
      if (vote === "stale")
        assert.match(reading.staleReason ?? "", new RegExp(`only ${live} of the ${needed} peers`));
    });
  }
});
