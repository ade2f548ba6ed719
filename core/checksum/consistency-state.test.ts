import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPrivateKey, type KeyObject } from "node:crypto";
import { computeChecksum, generateSigningKey, parseTrustedKeys, signAttestation } from ".";
import type { Ingress } from "../ingress/types";
import type { ChecksumObject } from "./crd";
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

describe("ConsistencyState: signatures required", () => {
  const a = ingress("site-1", "1");
  const b = ingress("site-2", "1");
  const signer = generateSigningKey();
  const key = createPrivateKey(signer.privateKeyPem);
  const parsed = parseTrustedKeys({ publisher: signer.publicKeyPem }, "keys");
  assert.ok(parsed.ok);
  const policy = { required: true, keys: parsed.value };

  /** A checksum object, signed by `by` unless it is undefined; `created` and the signed time may differ. */
  function signed(
    name: string,
    objects: Ingress[],
    by: KeyObject | undefined,
    at: string | [string, string],
  ) {
    const [signedAt, created] = typeof at === "string" ? [at, at] : at;
    const object = checksumObject(name, objects, "content", created);
    const spec = object.spec as Record<string, unknown>;
    spec.timestamp = signedAt;
    if (by) {
      const { mode, checksum, ids } = spec as { mode: "content"; checksum: string; ids: string[] };
      spec.signature = signAttestation(
        { kind: "IngressCheckSum", mode, checksum, timestamp: signedAt, ids },
        by,
      );
    }
    return object;
  }

  it("given an unsigned or forged object, ignores it and says why; a validly signed one attests", () => {
    const state = new ConsistencyState(undefined, 0, policy);
    state.observeObject("ingress", a);
    state.observeChecksum("ingress", signed("unsigned", [a], undefined, "2026-01-01T00:00:00Z"));
    const forger = createPrivateKey(generateSigningKey().privateKeyPem);
    state.observeChecksum("ingress", signed("forged", [a], forger, "2026-01-01T00:00:01Z"));
    assert.equal(state.anyConsistent("ingress"), undefined, "nothing may attest");
    const reasons = Object.fromEntries(
      state
        .observations("ingress")
        .map(o => [o.object.metadata?.name, o.observation.signatureProblem?.reason]),
    );
    assert.deepEqual(reasons, { unsigned: "Unsigned", forged: "BadSignature" });

    state.observeChecksum("ingress", signed("good", [a], key, "2026-01-01T00:00:02Z"));
    assert.equal(state.anyConsistent("ingress"), true);
  });

  it("given a signed object whose IDs were edited after signing, ignores it", () => {
    const state = new ConsistencyState(undefined, 0, policy);
    state.observeObject("ingress", a);
    state.observeObject("ingress", b);
    const object = signed("edited", [a], key, "2026-01-01T00:00:00Z");
    // The tenant's extra Ingress added to the IDs and the checksum made to match them.
    const { checksum, ids } = computeChecksum("Ingress", "content", [a, b]);
    Object.assign(object.spec as object, { checksum, ids });
    state.observeChecksum("ingress", object);
    assert.equal(state.anyConsistent("ingress"), undefined);
  });

  it("orders by the signed timestamp: an old signed object created again does not become the newest", () => {
    const state = new ConsistencyState(undefined, 0, policy);
    state.observeObject("ingress", a); // the cluster was rolled back to [a]
    state.observeChecksum("ingress", signed("current", [a, b], key, "2026-01-01T00:10:00Z"));
    // A copy of the attestation of [a] from before, created after the current one.
    state.observeChecksum(
      "ingress",
      signed("replayed", [a], key, ["2026-01-01T00:00:00Z", "2026-01-01T00:20:00Z"]),
    );
    assert.equal(state.anyConsistent("ingress", Date.parse("2026-01-01T00:30:00Z")), false);
    // Without the requirement creation orders, and the replay would attest.
    const open = new ConsistencyState(undefined, 0);
    open.observeObject("ingress", a);
    open.observeChecksum("ingress", signed("current", [a, b], key, "2026-01-01T00:10:00Z"));
    open.observeChecksum(
      "ingress",
      signed("replayed", [a], key, ["2026-01-01T00:00:00Z", "2026-01-01T00:20:00Z"]),
    );
    assert.equal(open.anyConsistent("ingress", Date.parse("2026-01-01T00:30:00Z")), true);
  });

  it("takes keys from the ConfigMap's data, keeping the previous ones when an entry is bad", () => {
    const state = new ConsistencyState(undefined, 0, { required: true, keys: new Map() });
    state.observeObject("ingress", a);
    state.observeChecksum("ingress", signed("good", [a], key, "2026-01-01T00:00:00Z"));
    assert.equal(state.anyConsistent("ingress"), undefined, "no key yet");
    const location = { namespace: "bulwark-system", name: "bulwark-checksum-keys" };
    const taken = state.takeTrustedKeys({ publisher: signer.publicKeyPem }, location);
    assert.deepEqual(taken, { ok: true, value: [signer.keyId], warnings: [] });
    assert.equal(state.anyConsistent("ingress"), true);
    const bad = state.takeTrustedKeys({ publisher: "not a key" }, location);
    assert.ok(!bad.ok);
    assert.equal(
      bad.errors[0]?.field,
      "configmap bulwark-system/bulwark-checksum-keys data.publisher",
    );
    assert.equal(state.anyConsistent("ingress"), true, "the previous keys stay");
  });

  it("re-judges published objects when the keys rotate", () => {
    const state = new ConsistencyState(undefined, 0, policy);
    state.observeObject("ingress", a);
    state.observeChecksum("ingress", signed("good", [a], key, "2026-01-01T00:00:00Z"));
    assert.equal(state.anyConsistent("ingress"), true);
    const next = generateSigningKey();
    const rotated = parseTrustedKeys({ next: next.publicKeyPem }, "keys");
    assert.ok(rotated.ok);
    state.setSignaturePolicy({ required: true, keys: rotated.value });
    assert.equal(state.anyConsistent("ingress"), undefined, "the removed key signs nothing now");
    state.setSignaturePolicy({ required: false, keys: rotated.value });
    assert.equal(state.anyConsistent("ingress"), true, "not required: the object counts again");
  });
});
