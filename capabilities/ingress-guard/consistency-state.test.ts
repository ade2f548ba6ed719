import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { computeChecksum } from "../../core/checksum";
import type { Ingress } from "../../core/ingress/types";
import type { ChecksumObject } from "./checksum-kinds";
import { ConsistencyState } from "./consistency-state";

function ingress(name: string, version: string, rv = "1", className = "bulwark"): Ingress {
  return {
    metadata: {
      name,
      namespace: "shop",
      resourceVersion: rv,
      annotations: { "nginx.ingress.kubernetes.io/version": version },
    },
    spec: { ingressClassName: className, rules: [{ host: `${name}.example.com` }] },
  };
}

function checksumObject(
  name: string,
  objects: Ingress[],
  mode: "tengine" | "content",
  created = "2026-01-01T00:00:00Z",
): ChecksumObject {
  const { checksum, ids } = computeChecksum("Ingress", mode, objects);
  return {
    metadata: { name, namespace: "guard", creationTimestamp: created as never },
    spec: { timestamp: created, checksum, ids, mode },
  } as ChecksumObject;
}

describe("ConsistencyState", () => {
  const a = ingress("site-1", "1");
  const b = ingress("site-2", "1");

  it("given the attested objects, observes a match in the object's own mode", () => {
    const state = new ConsistencyState();
    state.observeObject("ingress", a);
    state.observeObject("ingress", b);
    state.observeChecksum("ingress", checksumObject("t", [a, b], "tengine"));
    state.observeChecksum("ingress", checksumObject("c", [a, b], "content"));
    const seen = state
      .observations("ingress")
      .map(o => [
        o.object.metadata?.name,
        o.observation.observedChecksum === o.observation.publishedChecksum,
        o.observation.objectCount,
      ]);
    assert.deepEqual(seen, [
      ["t", true, 2],
      ["c", true, 2],
    ]);
    assert.equal(state.anyConsistent("ingress"), true);
  });

  it("given a changed object, names its old and new IDs", () => {
    const state = new ConsistencyState();
    state.observeObject("ingress", a);
    state.observeObject("ingress", b);
    state.observeChecksum("ingress", checksumObject("t", [a, b], "tengine"));
    state.observeObject("ingress", ingress("site-2", "2", "2"));
    const [only] = state.observations("ingress");
    assert.deepEqual([only?.observation.missing, only?.observation.unexpected], [["2-1"], ["2-2"]]);
    assert.equal(state.anyConsistent("ingress"), false);
  });

  it("given an Ingress of another class, leaves it out, and forgets one that moves away", () => {
    const state = new ConsistencyState();
    assert.equal(state.observeObject("ingress", ingress("site-3", "1", "1", "nginx")), false);
    state.observeObject("ingress", a);
    assert.equal(state.observeObject("ingress", ingress("site-1", "1", "2", "nginx")), true);
    state.observeChecksum("ingress", checksumObject("t", [], "tengine"));
    assert.equal(state.observations("ingress")[0]?.observation.objectCount, 0);
  });

  it("given the same resourceVersion again, reports no change", () => {
    const state = new ConsistencyState();
    assert.equal(state.observeObject("ingress", a), true);
    assert.equal(state.observeObject("ingress", a), false);
  });

  it("given a resync list, forgets what is gone and keeps what is there", () => {
    const state = new ConsistencyState();
    state.observeObject("ingress", a);
    state.observeObject("ingress", b);
    state.observeChecksum("ingress", checksumObject("old", [a, b], "tengine"));
    state.replaceAll("ingress", [a], [checksumObject("new", [a], "tengine")]);
    const seen = state
      .observations("ingress")
      .map(o => [o.object.metadata?.name, o.observation.missingCount]);
    assert.deepEqual(seen, [["new", 0]]);
  });

  it("given a checksum object with a malformed spec, observes it as invalid naming the field", () => {
    const state = new ConsistencyState();
    state.observeChecksum("ingress", {
      metadata: { name: "bad", namespace: "guard" },
      spec: { timestamp: "x", checksum: "XYZ" },
    } as ChecksumObject);
    assert.match(
      state.observations("ingress")[0]?.observation.invalidSpec ?? "",
      /^spec\.checksum: must be lowercase hex: 32 digits/,
    );
  });

  it("given a content-mode checksum of the old MD5 form, observes it as invalid: publish again", () => {
    const state = new ConsistencyState();
    const old = {
      metadata: { name: "old", namespace: "bulwark-system", creationTimestamp: new Date() },
      spec: { timestamp: "t", checksum: "0".repeat(32), mode: "content" },
    } as unknown as ChecksumObject;
    state.observeChecksum("ingress", old);
    assert.match(
      state.observations("ingress")[0]?.observation.invalidSpec ?? "",
      /spec\.checksum: must be 64 hex digits \(SHA-256\) in content mode.*publish again/,
    );
  });

  it("given a checksum object that switches mode, verifies it in the new mode only", () => {
    const state = new ConsistencyState();
    state.observeObject("ingress", a);
    state.observeChecksum("ingress", checksumObject("x", [a], "tengine"));
    state.observeChecksum("ingress", checksumObject("x", [a], "content"));
    const [only, ...rest] = state.observations("ingress");
    assert.equal(rest.length, 0);
    assert.equal(only?.observation.observedChecksum, only?.observation.publishedChecksum);
  });
});

describe("ConsistencyState: the rollback window", () => {
  const a = ingress("site-1", "1");
  const b = ingress("site-2", "1");
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const state = new ConsistencyState(undefined, 60_000);
  state.observeObject("ingress", a);
  // "old" attests [a]; "new", a minute later in creation, attests [a, b], which never landed.
  state.observeChecksum("ingress", checksumObject("old", [a], "content"));
  state.observeChecksum(
    "ingress",
    checksumObject("new", [a, b], "content", "2026-01-01T00:01:00Z"),
  );
  const newAt = t0 + 60_000;

  it("given the state the previous object attests, matches within the grace period only", () => {
    assert.equal(state.anyConsistent("ingress", newAt + 59_999), true);
    assert.equal(state.anyConsistent("ingress", newAt + 60_000), false);
    assert.equal(state.window("ingress", newAt + 1).closesAtMs, newAt + 60_000);
  });

  it("says Superseded on the previous object's status once the window closes", () => {
    const late = state.observations("ingress", newAt + 60_000);
    const old = late.find(o => o.object.metadata?.name === "old");
    assert.equal(old?.observation.supersededBy, "guard/new");
    const early = state.observations("ingress", newAt + 1);
    assert.equal(
      early.find(o => o.object.metadata?.name === "old")?.observation.supersededBy,
      undefined,
    );
  });
});
