import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EDGE_KEPT_READY_ANNOTATION } from "../names";
import type { ProtectionContext } from "./decision";
import { endpointsPatch, settleEndpoints } from "./endpoints";
import { endpointSlicePatch, settleEndpointSlice } from "./endpointslices";
import { applyPatch, MINUTE, pod, T0, unknownNode } from "./testkit";
import type { EndpointSlice, Endpoints, Node, Pod } from "./types";

// One pod on a voted-healthy Unknown node, flipped not ready by the controller after the node
// went Unknown, and a pod of a publishNotReadyAddresses Service that is ready by the controllers'
// own choice (never recorded, so never touched).
const nodes: Record<string, Node> = { edge: unknownNode("edge", "true") };
const pods: Pod[] = [
  pod({ name: "web", node: "edge", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "published", node: "edge", ready: "False", sinceMs: T0 - MINUTE }),
];
const podOf = (namespace: string, name: string) =>
  pods.find(p => p.metadata?.namespace === namespace && p.metadata.name === name);
const at = (minutes: number): ProtectionContext => ({
  node: name => nodes[name],
  now: new Date(T0 + minutes * MINUTE),
  defaultMaxUnknownMs: 5 * MINUTE,
});
const ref = (name: string) => ({ kind: "Pod", name, namespace: "ns", uid: `uid-${name}` });

describe("settleEndpointSlice: kept while protected, given back after", () => {
  const written: EndpointSlice = {
    metadata: { name: "web-abc", namespace: "ns", resourceVersion: "7" },
    endpoints: [
      {
        addresses: ["10.0.0.1"],
        nodeName: "edge",
        targetRef: ref("web"),
        conditions: { ready: false, serving: false, terminating: false },
      },
      {
        addresses: ["10.0.0.2"],
        targetRef: ref("published"),
        conditions: { ready: true, serving: false, terminating: false },
      },
    ],
  };

  it("given a protected node, promotes the pod and records it", () => {
    const settled = settleEndpointSlice({ slice: written, pod: podOf, context: at(1) });
    assert.deepEqual(settled.slice.endpoints?.[0]?.conditions, {
      ready: true,
      serving: true,
      terminating: false,
    });
    assert.equal(settled.slice.metadata?.annotations?.[EDGE_KEPT_READY_ANNOTATION], "uid-web");
    const patched = applyPatch(written, endpointSlicePatch(written, settled) ?? []);
    assert.deepEqual(patched, JSON.parse(JSON.stringify(settled.slice)));
  });

  it("given the limit reached, returns the kept pod to not ready, drops the record, leaves the other alone", () => {
    const kept = settleEndpointSlice({ slice: written, pod: podOf, context: at(1) }).slice;
    const settled = settleEndpointSlice({ slice: kept, pod: podOf, context: at(6) });
    assert.deepEqual(
      settled.restored?.map(r => r.index),
      [0],
    );
    assert.match(settled.restored?.[0]?.reason ?? "", /no longer protected: Unknown for 360s/);
    assert.deepEqual(settled.slice.endpoints?.[0]?.conditions, {
      ready: false,
      serving: false,
      terminating: false,
    });
    assert.deepEqual(settled.slice.endpoints?.[1], written.endpoints?.[1]);
    const patch = endpointSlicePatch(kept, settled) ?? [];
    assert.deepEqual(
      patch.map(op => `${op.op} ${op.path}`),
      [
        "test /metadata/resourceVersion",
        "replace /endpoints/0/conditions",
        "remove /metadata/annotations/edge.bulwark.dev~1kept-ready",
      ],
    );
    assert.deepEqual(applyPatch(kept, patch), JSON.parse(JSON.stringify(settled.slice)));
  });

  it("given a recorded pod that is gone, returns it not ready", () => {
    const kept = settleEndpointSlice({ slice: written, pod: podOf, context: at(1) }).slice;
    const settled = settleEndpointSlice({ slice: kept, pod: () => undefined, context: at(6) });
    assert.equal(settled.restored?.[0]?.reason, "the pod is gone");
    assert.equal(settled.slice.endpoints?.[0]?.conditions?.ready, false);
  });

  it("given a still protected node, changes nothing on the stored slice", () => {
    const kept = settleEndpointSlice({ slice: written, pod: podOf, context: at(1) }).slice;
    const settled = settleEndpointSlice({ slice: kept, pod: podOf, context: at(2) });
    assert.equal(endpointSlicePatch(kept, settled), undefined);
  });

  // The endpoint slice controller writes a Service with no pods as `endpoints: null` (no omitempty
  // in discovery/v1): this threw in admission once, and Pepr refused the slice.
  for (const endpoints of [null, undefined]) {
    it(`given a slice whose endpoints are ${endpoints}, changes nothing`, () => {
      const empty: EndpointSlice = { metadata: written.metadata, endpoints };
      const settled = settleEndpointSlice({ slice: empty, pod: podOf, context: at(1) });
      assert.equal(settled.slice.endpoints, endpoints);
      assert.equal(endpointSlicePatch(empty, settled), undefined);
    });

    it(`given a kept record on a slice whose endpoints became ${endpoints}, drops only the record`, () => {
      const kept = settleEndpointSlice({ slice: written, pod: podOf, context: at(1) }).slice;
      const emptied: EndpointSlice = { ...kept, endpoints };
      const settled = settleEndpointSlice({ slice: emptied, pod: podOf, context: at(2) });
      const patch = endpointSlicePatch(emptied, settled) ?? [];
      assert.deepEqual(
        patch.map(op => `${op.op} ${op.path}`),
        [
          "test /metadata/resourceVersion",
          "remove /metadata/annotations/edge.bulwark.dev~1kept-ready",
        ],
      );
      assert.equal(settled.slice.endpoints, endpoints);
    });
  }
});

describe("settleEndpoints: the same for the legacy Endpoints", () => {
  const written: Endpoints = {
    metadata: { name: "web", namespace: "ns", resourceVersion: "9" },
    subsets: [
      {
        addresses: [{ ip: "10.0.0.2", targetRef: ref("published") }],
        notReadyAddresses: [{ ip: "10.0.0.1", nodeName: "edge", targetRef: ref("web") }],
      },
    ],
  };

  it("given a protected node, moves the pod to addresses and records it", () => {
    const settled = settleEndpoints({ endpoints: written, pod: podOf, context: at(1) });
    assert.deepEqual(
      settled.endpoints.subsets?.[0]?.addresses?.map(a => a.ip),
      ["10.0.0.2", "10.0.0.1"],
    );
    assert.equal(settled.endpoints.metadata?.annotations?.[EDGE_KEPT_READY_ANNOTATION], "uid-web");
  });

  it("given a vote gone stale, moves the kept pod back and drops the record", () => {
    const kept = settleEndpoints({ endpoints: written, pod: podOf, context: at(1) }).endpoints;
    // 10 minutes on: past the vote's term (testkit TERM ends at T0 + 9 min), within no limit.
    const late: ProtectionContext = { ...at(10), defaultMaxUnknownMs: 60 * MINUTE };
    const settled = settleEndpoints({ endpoints: kept, pod: podOf, context: late });
    assert.match(settled.restored?.[0]?.reason ?? "", /the vote is stale/);
    assert.deepEqual(
      settled.endpoints.subsets?.[0]?.addresses?.map(a => a.ip),
      ["10.0.0.2"],
    );
    assert.deepEqual(
      settled.endpoints.subsets?.[0]?.notReadyAddresses?.map(a => a.ip),
      ["10.0.0.1"],
    );
    const patch = endpointsPatch(kept, settled) ?? [];
    assert.deepEqual(applyPatch(kept, patch), JSON.parse(JSON.stringify(settled.endpoints)));
    assert.equal(settled.endpoints.metadata?.annotations?.[EDGE_KEPT_READY_ANNOTATION], undefined);
  });
});
