// Who is in this daemon's group, and who probes whom.
//
// The group is core/edge's `votingGroup` (the same rule the Pepr side uses to judge a vote): with
// the zone ConfigMap's `TaintZoneAdmission: "true"`, the non-control-plane nodes sharing this
// node's `superedgehealth/topology-zone` label; else every non-control-plane node; a node without
// the label is a group of one. A node needs an InternalIP to be probed; one without it is left out
// of the group (and logged by the caller), so it neither votes nor is voted on.
//
// Probing: all-pairs is O(N²) checks and messages per period. Members sit on a ring ordered by a
// hash of their names (a fixed, pseudo-random order that every daemon computes alike from the
// same Node list), and each node checks itself and the next k = min(maxProbePeers, N−1) members.
// So every node is checked by exactly k peers plus itself, those checkers are known to everyone,
// and the vote on a node is a strict majority of its k+1 checkers. For N ≤ maxProbePeers+1 this is
// all-pairs and the vote is a strict majority of the whole group, SuperEdge's rule. A random
// subset drawn afresh each period would give no such guarantee: a node could get too few checkers
// in a period to reach any majority.
import { createHash } from "node:crypto";
import { votingGroup, type Node, type ZoneConfig } from "../core/edge";

export interface NodeWithAddresses extends Node {
  status?: Node["status"] & { addresses?: readonly { type: string; address: string }[] };
}

export interface Member {
  name: string;
  ip: string;
}

export function internalIp(node: NodeWithAddresses): string | undefined {
  return node.status?.addresses?.find(a => a.type === "InternalIP")?.address;
}

export interface Group {
  members: Member[];
  /** Nodes of the group that have no InternalIP, for a log line. */
  unaddressed: string[];
}

/** This node's group from the Node list and the zone configuration; empty if the node is unknown. */
export function groupOf(options: {
  self: string;
  nodes: readonly NodeWithAddresses[];
  config: ZoneConfig;
}): Group {
  const self = options.nodes.find(n => n.metadata?.name === options.self);
  if (!self) return { members: [], unaddressed: [] };
  const members: Member[] = [];
  const unaddressed: string[] = [];
  for (const node of votingGroup({ node: self, nodes: options.nodes, config: options.config })) {
    const name = node.metadata?.name;
    if (!name) continue;
    const ip = internalIp(node as NodeWithAddresses);
    if (ip) members.push({ name, ip });
    else unaddressed.push(name);
  }
  return { members, unaddressed };
}

const ringKey = (name: string): string => createHash("sha256").update(name).digest("hex");

/** The probe ring of one group: who checks whom, whose results go where. */
export class Ring {
  readonly members: readonly Member[];
  /** Peers each node probes besides itself. */
  readonly k: number;
  readonly #index = new Map<string, number>();

  constructor(members: readonly Member[], maxProbePeers: number) {
    this.members = [...members].sort((a, b) => {
      const ka = ringKey(a.name);
      const kb = ringKey(b.name);
      return ka === kb ? a.name.localeCompare(b.name) : ka < kb ? -1 : 1;
    });
    this.members.forEach((m, i) => this.#index.set(m.name, i));
    this.k = Math.max(0, Math.min(maxProbePeers, this.members.length - 1));
  }

  get size(): number {
    return this.members.length;
  }

  has(name: string): boolean {
    return this.#index.has(name);
  }

  member(name: string): Member | undefined {
    const i = this.#index.get(name);
    return i === undefined ? undefined : this.members[i];
  }

  #span(name: string, from: number, to: number): Member[] {
    const i = this.#index.get(name);
    if (i === undefined) return [];
    const n = this.members.length;
    const out: Member[] = [];
    for (let d = from; d <= to; d++) {
      const m = this.members[(((i + d) % n) + n) % n];
      if (m) out.push(m);
    }
    return out;
  }

  /** What `name` checks each period: itself, then the next k members. */
  targetsOf(name: string): Member[] {
    return this.#span(name, 0, this.k);
  }

  /** Who checks `name` (itself and the previous k members): the electorate of its vote. */
  checkersOf(name: string): Member[] {
    return this.#span(name, -this.k, 0);
  }

  /**
   * Who needs `name`'s results: every checker of every node `name` checks (any of them may be
   * the writer), i.e. the members within k ring steps either way, without `name` itself.
   */
  recipientsOf(name: string): Member[] {
    const seen = new Set<string>([name]);
    const out: Member[] = [];
    for (const m of this.#span(name, -this.k, this.k)) {
      if (seen.has(m.name)) continue;
      seen.add(m.name);
      out.push(m);
    }
    return out;
  }
}
