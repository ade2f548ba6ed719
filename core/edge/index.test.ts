import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as edge from "./index";

describe("core/edge public surface", () => {
  it("given the index, returns no test support", () => {
    assert.equal("applyPatch" in edge, false);
  });
});
