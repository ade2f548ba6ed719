// How a route chooses among its Service's endpoints besides round-robin, as ingress-nginx's Lua
// balancers do (balancer/chash.lua, chashsubset.lua, ewma.lua): a consistent-hash ring over the
// endpoints (CRC32 points, 160 virtual nodes each, as lua-resty-balancer's chash), a ring over
// groups of endpoints, and a decaying average of response times with "power of two choices"
// (ewma.lua: after Finagle's peak EWMA, without the peak). Pure logic: the clock and the random
// source are injected.
import { crc32 } from "node:zlib";
import type { HashPart } from "../../core/annotations";

/** A route's choice of endpoint; undefined in a route policy is round-robin. */
export type Balance =
  | { readonly kind: "ewma" }
  | {
      readonly kind: "hash";
      readonly by: readonly HashPart[];
      /** Group size (upstream-hash-by-subset); undefined hashes onto single endpoints. */
      readonly subsetSize: number | undefined;
    };

/** lua-resty-balancer's CONSISTENT_POINTS: virtual nodes per endpoint of weight 1. */
export const RING_POINTS = 160;

/**
 * A consistent-hash ring over `ids` (endpoint keys or group names): each id owns RING_POINTS
 * points, CRC32 of "id#n"; a key belongs to the first point at or after its own CRC32. A key's
 * owner changes only when its owner leaves or a new id takes the arc it falls in.
 */
export class HashRing {
  private readonly points: Uint32Array;
  private readonly owners: Uint32Array;

  constructor(ids: readonly string[], pointsPerId = RING_POINTS) {
    const all: [number, number][] = [];
    for (let owner = 0; owner < ids.length; owner++) {
      for (let n = 0; n < pointsPerId; n++) all.push([crc32(`${ids[owner]}#${n}`), owner]);
    }
    // Ties (rare) are broken by id order so every gateway builds the same ring.
    all.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.points = Uint32Array.from(all, ([point]) => point);
    this.owners = Uint32Array.from(all, ([, owner]) => owner);
  }

  /** The index (into `ids`) owning `key`; -1 for an empty ring. */
  find(key: string): number {
    return this.findAvoiding(key, -1);
  }

  /** The owner of `key`, or the next owner clockwise when that is `avoid` (a retry). */
  findAvoiding(key: string, avoid: number): number {
    const count = this.points.length;
    if (count === 0) return -1;
    let at = this.lowerBound(crc32(key));
    for (let seen = 0; seen < count; seen++, at++) {
      const owner = this.owners[at % count]!;
      if (owner !== avoid) return owner;
    }
    return this.owners[0]!;
  }

  private lowerBound(hash: number): number {
    let low = 0;
    let high = this.points.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.points[mid]! < hash) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * chashsubset.lua's groups: endpoints in order, `size` to a group; the last group is filled up
 * with endpoints from the start so every group has `size` members. Indexes into the endpoints.
 */
export function subsetsOf(count: number, size: number): number[][] {
  if (count === 0) return [];
  const groups = Math.ceil(count / size);
  const subsets: number[][] = [];
  for (let g = 0; g < groups; g++) {
    const members: number[] = [];
    for (let m = 0; m < size; m++) members.push((g * size + m) % count);
    subsets.push(members);
  }
  return subsets;
}

/** The endpoints of a backend seen through one hashing choice, built once per backend. */
export class HashChooser {
  private readonly ring: HashRing;
  private readonly subsets: number[][] | undefined;

  constructor(
    private readonly keys: readonly string[],
    subsetSize: number | undefined,
    private readonly random: () => number = Math.random,
  ) {
    this.subsets = subsetSize === undefined ? undefined : subsetsOf(keys.length, subsetSize);
    this.ring = new HashRing(
      this.subsets === undefined ? keys : this.subsets.map((_, i) => `set${i + 1}`),
    );
  }

  /** The endpoint index for a request key; a retry (`avoid`) goes to another one when there is one. */
  choose(key: string, avoid: number): number {
    const subsets = this.subsets;
    if (subsets === undefined) return this.ring.findAvoiding(key, avoid);
    const group = subsets[this.ring.find(key)];
    if (group === undefined) return -1;
    const others = group.filter(index => index !== avoid);
    const from = others.length > 0 ? others : group;
    return from[Math.floor(this.random() * from.length)]!;
  }
}

/** ingress-nginx's ewma.lua DECAY_TIME: 10 seconds. */
export const EWMA_DECAY_MS = 10_000;

/** The average `ewma` decayed over `elapsedMs`, moved towards `sample` by the time passed. */
export function decayEwma(
  ewma: number,
  elapsedMs: number,
  sample: number,
  decayMs = EWMA_DECAY_MS,
): number {
  const weight = Math.exp(-Math.max(0, elapsedMs) / decayMs);
  return ewma * weight + sample * (1 - weight);
}

interface EwmaEntry {
  ewma: number;
  at: number;
}

// The table is keyed by endpoint address as ingress-nginx's shared dict is; bounded all the same.
const MAX_EWMA_ENTRIES = 65_536;

/**
 * Response-time averages per endpoint ("address:port"), shared by every backend of the process
 * as ingress-nginx's balancer_ewma dict is shared by the workers' balancers.
 */
export class EwmaStats {
  private readonly entries = new Map<string, EwmaEntry>();

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
  ) {}

  /** The endpoint's average as of now, decayed towards 0 since its last sample (ewma.lua's score). */
  score(key: string): number {
    const entry = this.entries.get(key);
    if (entry === undefined) return 0;
    return decayEwma(entry.ewma, this.now() - entry.at, 0);
  }

  /** One response time (connect to response head) of the endpoint. */
  record(key: string, ms: number): void {
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry === undefined) {
      if (this.entries.size >= MAX_EWMA_ENTRIES) this.dropOldest();
      this.entries.set(key, { ewma: decayEwma(0, now, ms), at: now });
      return;
    }
    entry.ewma = decayEwma(entry.ewma, now - entry.at, ms);
    entry.at = now;
  }

  /**
   * ewma.lua's slow start: endpoints without an average get the mean of the others', so a new
   * endpoint is not flooded because it has no history yet.
   */
  seed(keys: readonly string[]): void {
    let total = 0;
    let known = 0;
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        total += this.score(key);
        known++;
      }
    }
    if (known === 0 || known === keys.length) return;
    const now = this.now();
    for (const key of keys) {
      if (!this.entries.has(key)) this.entries.set(key, { ewma: total / known, at: now });
    }
  }

  /** Power of two choices: two endpoints at random (not `avoid` when others exist), the lower score wins. */
  choose(keys: readonly string[], avoid: number): number {
    const count = keys.length;
    if (count <= 1) return count - 1;
    const first = this.randomIndex(count, avoid, -1);
    const second = this.randomIndex(count, avoid, first);
    if (second < 0) return first;
    return this.score(keys[second]!) < this.score(keys[first]!) ? second : first;
  }

  /** A random index other than `avoid` and `taken`; -1 when none is left. */
  private randomIndex(count: number, avoid: number, taken: number): number {
    const excluded = (avoid >= 0 ? 1 : 0) + (taken >= 0 && taken !== avoid ? 1 : 0);
    const left = count - excluded;
    if (left <= 0) return taken >= 0 ? -1 : Math.max(0, avoid);
    let n = Math.floor(this.random() * left);
    for (let index = 0; index < count; index++) {
      if (index === avoid || index === taken) continue;
      if (n-- === 0) return index;
    }
    return -1;
  }

  private dropOldest(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The process's response-time averages (ewma routes only record into it). */
export const EWMA_STATS = new EwmaStats();
