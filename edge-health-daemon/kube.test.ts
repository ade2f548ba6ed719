import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  EDGE_HEALTH_ANNOTATION,
  EDGE_VOTE_DECIDED_AT_ANNOTATION,
  EDGE_VOTE_VALID_UNTIL_ANNOTATION,
} from "../core/names";
import { parseKeys, slimNode, voteOnRecord, votePatch } from "./kube";

const k1 = "0123456789abcdef0123";
const k2 = "fedcba9876543210fedc";

describe("parseKeys (the key file or Secret value)", () => {
  const good: [string, string, string[]][] = [
    ["one key, as `echo` writes it", `${k1}\n`, [k1]],
    ["one key, no newline", k1, [k1]],
    ["two keys, newest first", `${k2}\n${k1}\n`, [k2, k1]],
    ["CRLF line ends and blank lines", `${k2}\r\n\r\n${k1}\r\n`, [k2, k1]],
  ];
  for (const [what, raw, expected] of good) {
    it(`given ${what}, returns the keys`, () =>
      assert.deepEqual(
        parseKeys(Buffer.from(raw), "f").map(k => k.toString()),
        expected,
      ));
  }
  const bad: [string, string, RegExp][] = [
    ["an empty file", "\n", /f: no HMAC key$/],
    [
      "a short key on line 2",
      `${k1}\nshort\n`,
      /f: line 2: the HMAC key must be at least 16 bytes$/,
    ],
    ["four keys", `${k1}\n${k2}\n${k1}x\n${k2}x\n`, /f: at most 3 keys \(one per line\), found 4$/],
  ];
  for (const [what, raw, pattern] of bad) {
    it(`given ${what}, throws naming the source`, () =>
      assert.throws(() => parseKeys(Buffer.from(raw), "f"), pattern));
  }
});

describe("the vote's write and read", () => {
  const term = {
    decidedAtMs: Date.UTC(2026, 0, 2, 3, 4, 5),
    validUntilMs: Date.UTC(2026, 0, 2, 3, 4, 35),
  };

  it("writes the value and its term in one merge patch of three annotations", () => {
    assert.deepEqual(votePatch("false", term), {
      metadata: {
        annotations: {
          [EDGE_HEALTH_ANNOTATION]: "false",
          [EDGE_VOTE_DECIDED_AT_ANNOTATION]: "2026-01-02T03:04:05.000Z",
          [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: "2026-01-02T03:04:35.000Z",
        },
      },
    });
  });

  it("reads back what it wrote: the value and the term", () => {
    assert.deepEqual(voteOnRecord(votePatch("true", term)), { value: "true", term });
  });

  it("a Node without a term, or with an unreadable one: the value only", () => {
    const value = { [EDGE_HEALTH_ANNOTATION]: "true" };
    assert.deepEqual(voteOnRecord({ metadata: { annotations: value } }), { value: "true" });
    const bad = {
      ...value,
      [EDGE_VOTE_DECIDED_AT_ANNOTATION]: "yesterday",
      [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: "2026-01-02T03:04:35Z",
    };
    assert.deepEqual(voteOnRecord({ metadata: { annotations: bad } }), { value: "true" });
    assert.deepEqual(voteOnRecord({ metadata: {} }), {});
  });
});

describe("slimNode", () => {
  it("keeps what grouping, votes and probes read, and drops the rest", () => {
    const node = {
      metadata: {
        name: "edge-a",
        resourceVersion: "7",
        labels: { "topology.kubernetes.io/zone": "z1" },
        annotations: { "superedgehealth/node-health": "true" },
        managedFields: [{ manager: "kubelet" }],
      },
      spec: { podCIDR: "10.0.0.0/24" },
      status: {
        addresses: [{ type: "InternalIP", address: "10.1.0.5" }],
        images: [{ names: ["registry.example/app:1"], sizeBytes: 1 }],
        conditions: [{ type: "Ready", status: "True" }],
      },
    };
    const slim = slimNode(node);
    assert.deepEqual(slim, {
      metadata: {
        name: "edge-a",
        namespace: undefined,
        resourceVersion: "7",
        labels: { "topology.kubernetes.io/zone": "z1" },
        annotations: { "superedgehealth/node-health": "true" },
      },
      status: { addresses: [{ type: "InternalIP", address: "10.1.0.5" }] },
    });
    assert.deepEqual(voteOnRecord(slim), voteOnRecord(node));
  });
});
