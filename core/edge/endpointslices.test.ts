import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ProtectionContext } from "./decision";
import { endpointSlicePatch, promoteEndpointSlice } from "./endpointslices";
import { applyPatch, MINUTE, pod, T0, unknownNode } from "./testkit";
import type { EndpointSlice, Node, Pod, SliceEndpoint } from "./types";

const nodes: Record<string, Node> = {
  safe: unknownNode("safe", "true"),
  bad: unknownNode("bad", "false"),
};
const pods: Pod[] = [
  pod({ name: "p1", node: "safe", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "p2", node: "safe", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "early", node: "safe", ready: "False", sinceMs: T0 - MINUTE }),
  pod({ name: "crash", node: "safe", ready: "False", sinceMs: T0 + 5_000, crashLoop: true }),
  pod({ name: "onbad", node: "bad", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "dying", node: "safe", ready: "False", sinceMs: T0 + 5_000, terminating: true }),
];
const podOf = (namespace: string, name: string) =>
  pods.find(p => p.metadata?.namespace === namespace && p.metadata.name === name);
const context: ProtectionContext = {
  node: name => nodes[name],
  now: new Date(T0 + MINUTE),
  defaultMaxUnknownMs: 10 * MINUTE,
};

function endpoint(name: string, conditions: SliceEndpoint["conditions"]): SliceEndpoint {
  const node = pods.find(p => p.metadata?.name === name)?.spec?.nodeName ?? "safe";
  return {
    addresses: [`ip-${name}`],
    conditions,
    nodeName: node,
    targetRef: { kind: "Pod", name, namespace: "ns", uid: `uid-${name}` },
  };
}
const notReady = { ready: false, serving: false, terminating: false };

describe("promoteEndpointSlice and endpointSlicePatch", () => {
  it("given mixed endpoints, returns only eligible ones ready and serving, patched by index", () => {
    const slice: EndpointSlice = {
      metadata: { name: "svc-abc", namespace: "ns", resourceVersion: "3" },
      endpoints: [
        endpoint("early", notReady),
        endpoint("p1", notReady),
        endpoint("ready", { ready: true, serving: true, terminating: false }),
        endpoint("dying", { ready: false, serving: false, terminating: true }),
        endpoint("crash", notReady),
        endpoint("p2", { ready: false }),
        endpoint("onbad", notReady),
        endpoint("ghost", notReady),
        { addresses: ["10.0.0.1"], conditions: notReady, nodeName: "safe" },
      ],
    };
    const before = structuredClone(slice);
    const result = promoteEndpointSlice({ slice, pod: podOf, context });
    assert.deepEqual(
      result.promoted.map(p => [p.index, p.pod]),
      [
        [1, "ns/p1"],
        [5, "ns/p2"],
      ],
    );
    assert.deepEqual(
      result.skipped.map(s => s.index),
      [0, 4, 6, 7, 8],
    );
    assert.deepEqual(result.slice.endpoints?.[1]?.conditions, {
      ready: true,
      serving: true,
      terminating: false,
    });
    assert.deepEqual(result.slice.endpoints?.[5]?.conditions, { ready: true, serving: true });
    assert.deepEqual(result.slice.endpoints?.[3], slice.endpoints?.[3], "terminating untouched");
    const patch = endpointSlicePatch(slice, result);
    assert.deepEqual(
      patch?.map(op => `${op.op} ${op.path}`),
      [
        "test /metadata/resourceVersion",
        "replace /endpoints/1/conditions",
        "replace /endpoints/5/conditions",
      ],
    );
    assert.deepEqual(applyPatch(slice, patch ?? []), result.slice);
    assert.deepEqual(slice, before, "input not modified");
  });

  it("given endpoints with ready unset (unknown, read as ready), returns them untouched", () => {
    const slice: EndpointSlice = { endpoints: [endpoint("p1", undefined), endpoint("p2", {})] };
    const result = promoteEndpointSlice({ slice, pod: podOf, context });
    assert.equal(result.slice, slice);
    assert.equal(endpointSlicePatch(slice, result), undefined);
  });

  it("given a slice without a resourceVersion (CREATE), returns a patch without a test", () => {
    const slice: EndpointSlice = {
      metadata: { namespace: "ns" },
      endpoints: [endpoint("p2", notReady), endpoint("p1", notReady)],
    };
    const result = promoteEndpointSlice({ slice, pod: podOf, context });
    const patch = endpointSlicePatch(slice, result);
    assert.deepEqual(
      patch?.map(op => op.path),
      ["/endpoints/0/conditions", "/endpoints/1/conditions"],
    );
    assert.deepEqual(applyPatch(slice, patch ?? []), result.slice);
  });

  it("given the node past its autonomy limit, returns nothing promoted", () => {
    const slice: EndpointSlice = {
      metadata: { namespace: "ns" },
      endpoints: [endpoint("p1", notReady)],
    };
    const late = { ...context, now: new Date(T0 + 10 * MINUTE) };
    const result = promoteEndpointSlice({ slice, pod: podOf, context: late });
    assert.equal(result.promoted.length, 0);
    assert.equal(endpointSlicePatch(slice, result), undefined);
  });
});
