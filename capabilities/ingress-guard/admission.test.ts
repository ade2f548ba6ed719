import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { refusedOnlyOnLatest } from "./admission";
import type { Freshness } from "./cluster-reads";

/** A review that finds `errors` on the copies of each freshness, recording what it read. */
function reviewing(errors: Record<Freshness, string[]>) {
  const reads: Freshness[] = [];
  const review = (freshness: Freshness) => {
    reads.push(freshness);
    return Promise.resolve({
      errors: errors[freshness].map(message => ({ field: "spec.tls[0]", message })),
    });
  };
  return { review, reads };
}

describe("refusedOnlyOnLatest", () => {
  it("approves on the cached copies without reading again", async () => {
    const { review, reads } = reviewing({ cached: [], latest: ["never asked"] });
    assert.deepEqual((await refusedOnlyOnLatest(review)).errors, []);
    assert.deepEqual(reads, ["cached"]);
  });

  it("does not refuse on a cached copy the latest contradicts (a certificate renewed a moment ago)", async () => {
    const { review, reads } = reviewing({ cached: ["not covered"], latest: [] });
    assert.deepEqual((await refusedOnlyOnLatest(review)).errors, []);
    assert.deepEqual(reads, ["cached", "latest"]);
  });

  it("refuses with what the latest copies show", async () => {
    const { review } = reviewing({ cached: ["old problem"], latest: ["current problem"] });
    const { errors } = await refusedOnlyOnLatest(review);
    assert.deepEqual(
      errors.map(e => e.message),
      ["current problem"],
    );
  });
});
