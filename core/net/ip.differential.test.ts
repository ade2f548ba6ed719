// parseIp, parseCidr and contains against Go's net package itself (test/oracles/net), which
// ingress-nginx validates source ranges with: every short string over the characters that matter,
// then many generated near-valid addresses and networks, then membership of generated addresses in
// generated networks. They must agree on every one: what Go refuses we refuse, what it accepts we
// read as the same network (compared in Go's own spelling).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { askGoOracle } from "../../test/harness/go-oracle";
import { pick, seededRandom as seeded, shortStrings } from "../../test/harness/generate";
import { contains, formatIp, formatNetwork, parseCidr, parseIp } from "./ip";

const ALPHABET = ["0", "1", "9", "f", "F", "g", ":", ".", "/", "%", " "];

type Random = () => number;
const VALID_V4_FIELDS = ["0", "1", "9", "10", "127", "192", "255"];
const INVALID_V4_FIELDS = ["256", "01", "007", "300", "", "1a"];
const VALID_V6_GROUPS = ["0", "1", "ff", "ffff", "FFFF", "0db8", "2001", "fe80"];
const INVALID_V6_GROUPS = ["00000", "g", "12345"];

/** Mostly valid pieces, now and then a wrong one, so both sides of every rule are reached. */
function piece(random: Random, valid: readonly string[], invalid: readonly string[]): string {
  return random() < 0.97 ? pick(random, valid) : pick(random, invalid);
}

function v4(random: Random): string {
  const count = random() < 0.95 ? 4 : pick(random, [3, 5]);
  return Array.from({ length: count }, () =>
    piece(random, VALID_V4_FIELDS, INVALID_V4_FIELDS),
  ).join(".");
}

function v6(random: Random): string {
  if (random() < 0.15) return `::ffff:${v4(random)}`;
  const compressed = random() < 0.6;
  const tail = random() < 0.2;
  const full = tail ? 6 : 8;
  const count = compressed ? Math.floor(random() * full) : random() < 0.9 ? full : full + 1;
  const groups = Array.from({ length: count }, () =>
    piece(random, VALID_V6_GROUPS, INVALID_V6_GROUPS),
  );
  if (tail) groups.push(v4(random));
  let text = groups.join(":");
  if (compressed) {
    const at = Math.floor(random() * (count + 1));
    text = [groups.slice(0, at).join(":"), groups.slice(at).join(":")].join("::");
  }
  return random() < 0.03 ? `${text}%eth0` : text;
}

function address(random: Random): string {
  return random() < 0.5 ? v4(random) : v6(random);
}

function prefix(random: Random): string {
  return pick(random, ["0", "8", "24", "32", "33", "64", "96", "100", "120", "128", "129"]);
}

function cidr(random: Random): string {
  const bits =
    random() < 0.1 ? pick(random, ["", "024", "-1", "+8", "0000000000008"]) : prefix(random);
  return `${address(random)}/${bits}`;
}

const orNull = <T>(value: T | undefined): T | null => value ?? null;

function ours(query: readonly string[]): unknown {
  if (query[0] === "ip") {
    const ip = parseIp(query[1]!);
    return orNull(ip && formatIp(ip));
  }
  if (query[0] === "cidr") {
    const network = parseCidr(query[1]!);
    return orNull(network && formatNetwork(network));
  }
  const network = parseCidr(query[1]!);
  const ip = parseIp(query[2]!);
  return network && ip ? contains(network, ip) : null;
}

/** Compares every answer; `minAccepted` keeps the generator honest (both sides reached). */
function compare(queries: readonly (readonly string[])[], minAccepted: number): void {
  const answers = askGoOracle("net", queries);
  const accepted = answers.filter(answer => answer !== null).length;
  console.log("accepted", accepted, queries.length);
  assert.ok(accepted >= minAccepted, `only ${accepted} of ${queries.length} queries were valid`);
  const differences = queries
    .map((query, i) => ({ query, go: answers[i], ours: ours(query) }))
    .filter(row => row.go !== row.ours);
  assert.deepEqual(differences.slice(0, 10), [], `${differences.length} differences from Go`);
}

describe("IP parsing against Go's net package", () => {
  it("agrees on every string of up to 5 characters, as an address and as a network", () => {
    const queries: string[][] = [];
    for (const text of shortStrings(ALPHABET, 5)) queries.push(["ip", text], ["cidr", text]);
    compare(queries, 100);
  });

  it("agrees on 60 000 generated addresses and networks near the valid ones", () => {
    const random = seeded(21);
    const queries: string[][] = [];
    for (let i = 0; i < 30_000; i++) queries.push(["ip", address(random)], ["cidr", cidr(random)]);
    compare(queries, 30_000);
  });

  it("agrees on whether 40 000 generated addresses lie in generated networks", () => {
    const random = seeded(7);
    const queries: string[][] = [];
    for (let i = 0; i < 40_000; i++) {
      const base = random() < 0.5 ? `10.${i % 256}.3.4` : `2001:db8::${(i % 65536).toString(16)}`;
      const network = random() < 0.5 ? `${base}/${prefix(random)}` : cidr(random);
      const client =
        random() < 0.5
          ? base.replace(/\d+$/, String(i % 7))
          : pick(random, [address(random), `::ffff:${base}`]);
      queries.push(["contains", network, client]);
    }
    compare(queries, 15_000);
  });
});
