import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EDGE_ZONE_LABEL } from "../core/names";
import { groupOf, Ring, type Member, type NodeWithAddresses } from "./membership";

const node = (
  name: string,
  ip?: string,
  labels: Record<string, string> = {},
): NodeWithAddresses => ({
  metadata: { name, labels },
  status: ip
    ? {
        addresses: [
          { type: "Hostname", address: name },
          { type: "InternalIP", address: ip },
        ],
      }
    : {},
});

describe("groupOf", () => {
  const nodes = [
    node("a", "10.0.0.1", { [EDGE_ZONE_LABEL]: "z1" }),
    node("b", "10.0.0.2", { [EDGE_ZONE_LABEL]: "z1" }),
    node("c", "10.0.0.3", { [EDGE_ZONE_LABEL]: "z2" }),
    node("d", undefined, { [EDGE_ZONE_LABEL]: "z1" }),
    node("e", "10.0.0.5"),
    node("cp", "10.0.0.9", { "node-role.kubernetes.io/control-plane": "" }),
  ];
  it("zones off: every non-control-plane node with an address", () => {
    const g = groupOf({ self: "a", nodes, config: { taintZoneAdmission: false } });
    assert.deepEqual(
      g.members.map(m => m.name),
      ["a", "b", "c", "e"],
    );
    assert.deepEqual(g.unaddressed, ["d"]);
  });
  it("zones on: the same zone only", () => {
    const g = groupOf({ self: "a", nodes, config: { taintZoneAdmission: true } });
    assert.deepEqual(g.members, [
      { name: "a", ip: "10.0.0.1" },
      { name: "b", ip: "10.0.0.2" },
    ]);
  });
  it("zones on, no label: a group of one", () => {
    const g = groupOf({ self: "e", nodes, config: { taintZoneAdmission: true } });
    assert.deepEqual(
      g.members.map(m => m.name),
      ["e"],
    );
  });
  it("a control-plane node or an unknown node has no group", () => {
    assert.deepEqual(
      groupOf({ self: "cp", nodes, config: { taintZoneAdmission: false } }).members,
      [],
    );
    assert.deepEqual(
      groupOf({ self: "zz", nodes, config: { taintZoneAdmission: false } }).members,
      [],
    );
  });
});

const members = (n: number): Member[] =>
  Array.from({ length: n }, (_, i) => ({ name: `node-${i}`, ip: `10.0.${i >> 8}.${i & 255}` }));

describe("Ring", () => {
  it("small group: all-pairs; everyone checks everyone and sends to everyone", () => {
    const ring = new Ring(members(7), 16);
    assert.equal(ring.k, 6);
    for (const m of ring.members) {
      assert.equal(ring.targetsOf(m.name).length, 7);
      assert.equal(ring.checkersOf(m.name).length, 7);
      assert.equal(ring.recipientsOf(m.name).length, 6);
      assert.equal(ring.targetsOf(m.name)[0]?.name, m.name, "a node checks itself first");
    }
  });

  it("200 nodes, 16 probes: each node probes 16 peers and is checked by exactly 16 peers plus itself", () => {
    const ring = new Ring(members(200), 16);
    const checkedBy = new Map<string, Set<string>>();
    for (const m of ring.members) {
      const targets = ring.targetsOf(m.name);
      assert.equal(targets.length, 17);
      for (const t of targets) {
        const set = checkedBy.get(t.name) ?? new Set<string>();
        set.add(m.name);
        checkedBy.set(t.name, set);
      }
      assert.equal(ring.recipientsOf(m.name).length, 32);
    }
    for (const m of ring.members) {
      const expected = new Set(ring.checkersOf(m.name).map(c => c.name));
      assert.deepEqual(checkedBy.get(m.name), expected, "checkersOf is exactly who probes it");
      assert.equal(expected.size, 17);
    }
  });

  it("every checker of a node receives every other checker's row (any of them can write)", () => {
    const ring = new Ring(members(50), 5);
    for (const t of ring.members) {
      const checkers = ring.checkersOf(t.name);
      for (const c of checkers) {
        const recipients = new Set(ring.recipientsOf(c.name).map(r => r.name));
        const missing = checkers.filter(o => o.name !== c.name && !recipients.has(o.name));
        assert.deepEqual(missing, []);
      }
    }
  });

  it("is the same order whatever order the nodes were listed in", () => {
    const a = new Ring(members(30), 4).members.map(m => m.name);
    const b = new Ring(members(30).reverse(), 4).members.map(m => m.name);
    assert.deepEqual(a, b);
  });

  it("one member: checks only itself, sends to nobody", () => {
    const ring = new Ring(members(1), 16);
    assert.equal(ring.k, 0);
    assert.deepEqual(
      ring.targetsOf("node-0").map(m => m.name),
      ["node-0"],
    );
    assert.deepEqual(ring.recipientsOf("node-0"), []);
  });
});
