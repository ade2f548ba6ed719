import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { stripUnreachableNoExecute, taintRemovalPatch } from "./taint";
import type { Taint } from "./types";

const unreachableNoExecute: Taint = {
  key: "node.kubernetes.io/unreachable",
  effect: "NoExecute",
  timeAdded: "2024-05-01T10:00:05Z",
};
const unreachableNoSchedule: Taint = {
  key: "node.kubernetes.io/unreachable",
  effect: "NoSchedule",
};
const notReadyNoExecute: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoExecute" };
const custom: Taint = { key: "example.com/dedicated", effect: "NoExecute", value: "edge" };

describe("stripUnreachableNoExecute", () => {
  const cases: [string, Taint[] | undefined, Taint[], boolean][] = [
    ["no taints", undefined, [], false],
    ["an empty list", [], [], false],
    ["only unreachable:NoExecute", [unreachableNoExecute], [], true],
    [
      "unreachable NoSchedule and NoExecute",
      [unreachableNoSchedule, unreachableNoExecute],
      [unreachableNoSchedule],
      true,
    ],
    [
      "unreachable:NoExecute between others",
      [custom, unreachableNoExecute, notReadyNoExecute],
      [custom, notReadyNoExecute],
      true,
    ],
    ["a duplicate unreachable:NoExecute", [unreachableNoExecute, unreachableNoExecute], [], true],
    [
      "only NoSchedule and not-ready",
      [unreachableNoSchedule, notReadyNoExecute],
      [unreachableNoSchedule, notReadyNoExecute],
      false,
    ],
  ];
  for (const [title, taints, expected, removed] of cases) {
    it(`given ${title}, returns ${expected.length} taint(s), removed=${removed}`, () => {
      assert.deepEqual(stripUnreachableNoExecute(taints), { taints: expected, removed });
    });
  }
});

describe("taintRemovalPatch", () => {
  it("given a node without the taint, returns undefined", () => {
    assert.equal(taintRemovalPatch({ spec: { taints: [unreachableNoSchedule] } }), undefined);
    assert.equal(taintRemovalPatch({}), undefined);
  });
  it("given a resourceVersion, returns a resourceVersion test and a replace", () => {
    const patch = taintRemovalPatch({
      metadata: { resourceVersion: "42" },
      spec: { taints: [unreachableNoSchedule, unreachableNoExecute] },
    });
    assert.deepEqual(patch, [
      { op: "test", path: "/metadata/resourceVersion", value: "42" },
      { op: "replace", path: "/spec/taints", value: [unreachableNoSchedule] },
    ]);
  });
  it("given no resourceVersion, returns a test of the exact current array and a replace", () => {
    const patch = taintRemovalPatch({ spec: { taints: [unreachableNoExecute, custom] } });
    assert.deepEqual(patch, [
      { op: "test", path: "/spec/taints", value: [unreachableNoExecute, custom] },
      { op: "replace", path: "/spec/taints", value: [custom] },
    ]);
  });
  it("given Date timeAdded (client-node), returns times as the API server stores them", () => {
    const when = new Date("2024-05-01T10:00:05Z");
    const patch = taintRemovalPatch({
      spec: {
        taints: [
          { ...unreachableNoExecute, timeAdded: when },
          { ...unreachableNoSchedule, timeAdded: when },
        ],
      },
    });
    assert.deepEqual(patch, [
      {
        op: "test",
        path: "/spec/taints",
        value: [
          { ...unreachableNoExecute, timeAdded: "2024-05-01T10:00:05Z" },
          { ...unreachableNoSchedule, timeAdded: "2024-05-01T10:00:05Z" },
        ],
      },
      {
        op: "replace",
        path: "/spec/taints",
        value: [{ ...unreachableNoSchedule, timeAdded: "2024-05-01T10:00:05Z" }],
      },
    ]);
  });
});
