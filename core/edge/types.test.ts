import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1Endpoints, V1EndpointSlice, V1Node, V1Pod } from "@kubernetes/client-node";
import {
  kubeTimeString,
  nodeReady,
  timeMs,
  type Endpoints,
  type EndpointSlice,
  type KubeTime,
  type Node,
  type Pod,
} from "./types";

// Compile-time: client-node's objects must be assignable to the structural types. tsc checks
// these; at run time they are only identity functions.
const asNode = (n: V1Node): Node => n;
const asPod = (p: V1Pod): Pod => p;
const asEndpoints = (e: V1Endpoints): Endpoints => e;
const asSlice = (s: V1EndpointSlice): EndpointSlice => s;

describe("client-node assignability", () => {
  it("given client-node objects with Date fields, returns them unchanged as core types", () => {
    const when = new Date("2024-05-01T10:00:00Z");
    const node = asNode({
      metadata: { name: "n1" },
      spec: { taints: [{ key: "k", effect: "NoExecute", timeAdded: when }] },
      status: { conditions: [{ type: "Ready", status: "Unknown", lastTransitionTime: when }] },
    });
    assert.equal(nodeReady(node)?.status, "Unknown");
    assert.equal(
      asPod({ metadata: { deletionTimestamp: when } }).metadata?.deletionTimestamp,
      when,
    );
    assert.deepEqual(asEndpoints({ subsets: [] }).subsets, []);
    assert.deepEqual(asSlice({ addressType: "IPv4", endpoints: [] }).endpoints, []);
  });
});

describe("timeMs", () => {
  const cases: [KubeTime | undefined, number | undefined][] = [
    [undefined, undefined],
    ["not a time", undefined],
    ["2024-05-01T10:00:00Z", Date.UTC(2024, 4, 1, 10)],
    [new Date(Date.UTC(2024, 4, 1, 10)), Date.UTC(2024, 4, 1, 10)],
  ];
  for (const [time, expected] of cases) {
    it(`given ${String(time)}, returns ${String(expected)}`, () => {
      assert.equal(timeMs(time), expected);
    });
  }
});

describe("kubeTimeString", () => {
  const cases: [KubeTime, string][] = [
    ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"],
    [new Date("2024-05-01T10:00:00Z"), "2024-05-01T10:00:00Z"],
  ];
  for (const [time, expected] of cases) {
    it(`given ${typeof time === "string" ? "a string" : "a Date"}, returns ${expected}`, () => {
      assert.equal(kubeTimeString(time), expected);
    });
  }
});

describe("nodeReady", () => {
  it("given a node without conditions, returns undefined", () => {
    assert.equal(nodeReady({}), undefined);
  });
  it("given a node with Ready among others, returns Ready", () => {
    const node: Node = {
      status: {
        conditions: [
          { type: "MemoryPressure", status: "False" },
          { type: "Ready", status: "True" },
        ],
      },
    };
    assert.equal(nodeReady(node)?.status, "True");
  });
});
