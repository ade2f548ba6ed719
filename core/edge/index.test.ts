import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as edge from "./index";

describe("core/edge public surface", () => {
  const expected = [
    "autonomyLimit",
    "endpointSlicePatch",
    "endpointsPatch",
    "nodeVote",
    "parseZoneConfig",
    "promoteEndpointSlice",
    "promoteEndpoints",
    "protectNode",
    "protectionByName",
    "readVote",
    "stripUnreachableNoExecute",
    "taintRemovalPatch",
    "votingGroup",
  ];
  for (const name of expected) {
    it(`given the index, returns a function ${name}`, () => {
      assert.equal(typeof (edge as Record<string, unknown>)[name], "function");
    });
  }
  it("given the index, returns no test support", () => {
    assert.equal("applyPatch" in edge, false);
  });
});
