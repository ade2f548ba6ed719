import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ProtectionContext } from "./decision";
import { endpointsPatch, promoteEndpoints } from "./endpoints";
import { applyPatch, MINUTE, pod, readyNode, T0, unknownNode } from "./testkit";
import type { EndpointAddress, Endpoints, Node, Pod } from "./types";

const nodes: Record<string, Node> = {
  safe: unknownNode("safe", "true"),
  bad: unknownNode("bad", "false"),
  up: readyNode("up"),
};
const pods: Pod[] = [
  pod({ name: "p1", node: "safe", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "p2", node: "safe", ready: "False", sinceMs: T0 }),
  pod({ name: "p3", node: "safe", ready: "False", sinceMs: T0 + 9_000 }),
  pod({ name: "early", node: "safe", ready: "False", sinceMs: T0 - MINUTE }),
  pod({ name: "dying", node: "safe", ready: "False", sinceMs: T0 + 5_000, terminating: true }),
  pod({ name: "crash", node: "safe", ready: "False", sinceMs: T0 + 5_000, crashLoop: true }),
  pod({ name: "onbad", node: "bad", ready: "False", sinceMs: T0 + 5_000 }),
  pod({ name: "onup", node: "up", ready: "False", sinceMs: T0 - MINUTE }),
  pod({ name: "renamed", node: "safe", ready: "False", sinceMs: T0 + 5_000, uid: "new" }),
];
const podOf = (namespace: string, name: string) =>
  pods.find(p => p.metadata?.namespace === namespace && p.metadata.name === name);
const context: ProtectionContext = {
  node: name => nodes[name],
  now: new Date(T0 + MINUTE),
  defaultMaxUnknownMs: 10 * MINUTE,
};

let ip = 0;
function address(
  name: string,
  node: string | undefined = pods.find(p => p.metadata?.name === name)?.spec?.nodeName,
): EndpointAddress {
  ip += 1;
  return {
    ip: `10.0.0.${ip}`,
    nodeName: node,
    targetRef: {
      kind: "Pod",
      name,
      namespace: "ns",
      uid: name === "renamed" ? "old" : `uid-${name}`,
    },
  };
}
const names = (list: EndpointAddress[] | undefined) =>
  (list ?? []).map(a => a.targetRef?.name ?? a.ip);

/** Promotes, applies the built patch to the original, and checks it equals the pure result. */
function run(endpoints: Endpoints) {
  const result = promoteEndpoints({ endpoints, pod: podOf, context });
  const patch = endpointsPatch(endpoints, result);
  if (patch !== undefined) assert.deepEqual(applyPatch(endpoints, patch), result.endpoints);
  return { result, patch };
}

describe("promoteEndpoints and endpointsPatch", () => {
  // [title, notReady pod names (one subset), expected addresses after, expected notReady after]
  const orders: [string, string[], string[], string[]][] = [
    ["three promotable in order", ["p1", "p2", "p3"], ["ready", "p1", "p2", "p3"], []],
    [
      "promotable and not, mixed",
      ["early", "p1", "dying", "p2", "crash", "p3"],
      ["ready", "p1", "p2", "p3"],
      ["early", "dying", "crash"],
    ],
    [
      "not promotable first and last",
      ["onbad", "p3", "p1", "onup"],
      ["ready", "p3", "p1"],
      ["onbad", "onup"],
    ],
    ["only unpromotable", ["early", "onbad", "renamed"], ["ready"], ["early", "onbad", "renamed"]],
    ["a pod not found", ["ghost", "p2"], ["ready", "p2"], ["ghost"]],
  ];
  for (const [title, notReady, addresses, stay] of orders) {
    it(`given ${title}, returns addresses [${addresses.join(", ")}] and notReady [${stay.join(", ")}]`, () => {
      const endpoints: Endpoints = {
        metadata: { name: "svc", namespace: "ns", resourceVersion: "7" },
        subsets: [
          {
            addresses: [
              { ip: "10.9.9.9", targetRef: { kind: "Pod", name: "ready", namespace: "ns" } },
            ],
            notReadyAddresses: notReady.map(n => address(n, n === "ghost" ? "safe" : undefined)),
            ports: [{ port: 80 }],
          },
        ],
      };
      const before = structuredClone(endpoints);
      const { result, patch } = run(endpoints);
      assert.deepEqual(names(result.endpoints.subsets?.[0]?.addresses), addresses);
      assert.deepEqual(names(result.endpoints.subsets?.[0]?.notReadyAddresses), stay);
      assert.equal(result.moved.length, addresses.length - 1);
      assert.equal(result.skipped.length, stay.length);
      assert.equal(patch === undefined, addresses.length === 1);
      assert.deepEqual(endpoints, before, "input not modified");
    });
  }

  it("given several subsets, some unchanged and one without addresses, returns one patch for the changed ones", () => {
    const endpoints: Endpoints = {
      metadata: { namespace: "ns", resourceVersion: "8" },
      subsets: [
        { notReadyAddresses: [address("p1"), address("early")], ports: [{ port: 80 }] },
        { addresses: [address("p2")], ports: [{ port: 81 }] },
        { addresses: [], notReadyAddresses: [address("onbad")], ports: [{ port: 82 }] },
        { notReadyAddresses: [address("p3"), address("p2")], ports: [{ port: 83 }] },
      ],
    };
    const { result, patch } = run(endpoints);
    assert.deepEqual(
      result.endpoints.subsets?.map(s => names(s.addresses)),
      [["p1"], ["p2"], [], ["p3", "p2"]],
    );
    assert.deepEqual(
      result.endpoints.subsets?.map(s => names(s.notReadyAddresses)),
      [["early"], [], ["onbad"], []],
    );
    assert.equal(result.endpoints.subsets?.[3]?.notReadyAddresses, undefined);
    assert.deepEqual(
      patch?.map(op => `${op.op} ${op.path}`),
      [
        "test /metadata/resourceVersion",
        "add /subsets/0/addresses",
        "add /subsets/0/notReadyAddresses",
        "add /subsets/3/addresses",
        "remove /subsets/3/notReadyAddresses",
      ],
    );
    assert.deepEqual(
      result.moved.map(m => [m.subset, m.pod]),
      [
        [0, "ns/p1"],
        [3, "ns/p3"],
        [3, "ns/p2"],
      ],
    );
  });

  it("given addresses without targetRef or with a non-Pod one, returns them skipped", () => {
    const endpoints: Endpoints = {
      metadata: { namespace: "ns" },
      subsets: [
        {
          notReadyAddresses: [
            { ip: "10.1.1.1", nodeName: "safe" },
            { ip: "10.1.1.2", nodeName: "safe", targetRef: { kind: "Node", name: "safe" } },
          ],
        },
      ],
    };
    const { result, patch } = run(endpoints);
    assert.equal(patch, undefined);
    assert.equal(result.endpoints, endpoints);
    assert.deepEqual(
      result.skipped.map(s => s.reason),
      ["no Pod targetRef", "no Pod targetRef"],
    );
  });

  it("given an address without nodeName, returns it promoted by the pod's spec.nodeName", () => {
    const endpoints: Endpoints = {
      metadata: { namespace: "ns" },
      subsets: [
        { notReadyAddresses: [{ ip: "10.2.2.2", targetRef: { kind: "Pod", name: "p1" } }] },
      ],
    };
    const { result, patch } = run(endpoints);
    assert.deepEqual(
      result.moved.map(m => m.nodeName),
      ["safe"],
    );
    assert.deepEqual(
      patch?.map(op => op.op),
      ["add", "remove"],
    );
  });

  it("given a node missing from the cache or past the limit, returns nothing moved", () => {
    const endpoints: Endpoints = {
      metadata: { namespace: "ns" },
      subsets: [{ notReadyAddresses: [address("p1", "gone")] }],
    };
    assert.equal(
      promoteEndpoints({ endpoints, pod: podOf, context }).skipped[0]?.reason,
      "address says node gone, pod runs on safe",
    );
    const late = { ...context, now: new Date(T0 + 11 * MINUTE) };
    const result = promoteEndpoints({
      endpoints: { subsets: [{ notReadyAddresses: [address("p1")] }] },
      pod: podOf,
      context: late,
    });
    assert.equal(result.moved.length, 0);
    assert.match(result.skipped[0]?.reason ?? "", /not protected/);
  });

  it("given no subsets, returns the object unchanged and no patch", () => {
    const endpoints: Endpoints = { metadata: { name: "empty" } };
    const { result, patch } = run(endpoints);
    assert.equal(result.endpoints, endpoints);
    assert.equal(patch, undefined);
  });

  it("given a node that is looked up for many addresses, returns after one cache lookup", () => {
    let lookups = 0;
    const counting = { ...context, node: (name: string) => ((lookups += 1), nodes[name]) };
    promoteEndpoints({
      endpoints: {
        subsets: [{ notReadyAddresses: [address("p1"), address("p2"), address("p3")] }],
      },
      pod: podOf,
      context: counting,
    });
    assert.equal(lookups, 1);
  });
});
