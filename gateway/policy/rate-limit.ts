// Request and connection limits per client address, with nginx's arithmetic and nothing else: no
// sockets, no timers, the clock passed in. ingress-nginx renders `limit-rps`/`limit-rpm` as
// `limit_req zone=<ingress>_rps burst=<rate × multiplier> nodelay;` over a `limit_req_zone` of
// `rate=<n>r/s` (or r/m), and `limit-connections` as `limit_conn <ingress>_conn <n>;`.
//
// nginx's limit_req (ngx_http_limit_req_module.c) keeps, per key, an `excess` in thousandths of a
// request and the time of the last accounted request in ms. The zone's rate is `n * 1000 / 60` for
// r/m, `n * 1000` for r/s (integer division); a request arriving `ms` after `last` computes
// `excess - rate * ms / 1000 + 1000` (integer division, floored at 0): over `burst * 1000` it is
// refused and nothing changes; otherwise it is stored, and `last` moves only when ms > 0. A new
// key starts at excess 0, so a fresh client gets 1 + burst requests at once with nodelay. Several
// limits on one request: each is checked, and only when all pass are all accounted.
//
// Memory: each store holds at most `capacity` keys, least recently seen first out (as nginx's zone
// queue: a key moves to the front on every lookup, refused ones included, and the tail goes when
// a new key needs room). An address is evicted only after capacity/2 other addresses arrived since
// its last request; those addresses each had a fresh burst of their own, so flooding to reset one
// client's bucket gains the flooder 2/capacity of what the flood itself already got. A refused
// client that keeps trying stays at the front and is never evicted.
import type { Address } from "../../core/net/ip";

/** One limit_req zone's parameters, in nginx's units. */
export interface RequestRate {
  /** Thousandths of a request per second (nginx's ctx->rate). */
  readonly rate: number;
  /** Thousandths of a request (nginx's limit->burst). */
  readonly burst: number;
}

/**
 * `limit_req_zone … rate=<count>r/<per>` with `limit_req … burst=<burst>`; `share` divides it among
 * the gateway's worker processes (1: the whole limit).
 */
export function requestRate(count: number, per: "s" | "m", burst: number, share = 1): RequestRate {
  const scale = per === "m" ? 60 : 1;
  return {
    rate: Math.max(1, Math.floor((count * 1000) / scale / share)),
    burst: Math.floor((burst * 1000) / share),
  };
}

interface Bucket {
  excess: number;
  last: number;
}

/** ms since the bucket's last request, as nginx clamps it when the clock steps back. */
function elapsed(bucket: Bucket, now: number): number {
  const ms = now - bucket.last;
  if (ms < -60_000) return 1;
  return ms < 0 ? 0 : ms;
}

/** The excess a request at `now` would leave (nginx's formula); 0 for a new key. */
export function nextExcess(bucket: Bucket | undefined, rate: RequestRate, now: number): number {
  if (bucket === undefined) return 0;
  const excess = bucket.excess - Math.floor((rate.rate * elapsed(bucket, now)) / 1000) + 1000;
  return excess < 0 ? 0 : excess;
}

/** A key for the maps: IPv4 as a number, IPv6 as a 16-character string. */
export function addressKey(address: Address): number | string {
  if (address.length === 4) {
    return ((address[0]! << 24) | (address[1]! << 16) | (address[2]! << 8) | address[3]!) >>> 0;
  }
  return String.fromCharCode(...address);
}

export const DEFAULT_CAPACITY = 65_536;

/**
 * At most `capacity` entries, least recently seen out first, in O(1): two generations of half the
 * capacity each. A lookup moves an entry into the current one; when it is full, the older one is
 * dropped whole and the current one becomes the older. An entry is dropped only after capacity/2
 * other keys were seen since its last lookup. (One Map with delete-oldest would do the same, but
 * V8 skips the deleted slots at its start on every `keys().next()`.)
 */
export class RecentMap<V> {
  private current = new Map<number | string, V>();
  private older = new Map<number | string, V>();
  private readonly half: number;

  constructor(readonly capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }

  get size(): number {
    return this.current.size + this.older.size;
  }

  /** The entry, now the most recent; undefined when absent. */
  touch(key: number | string): V | undefined {
    const found = this.current.get(key);
    if (found !== undefined) return found;
    const old = this.older.get(key);
    if (old === undefined) return undefined;
    this.older.delete(key);
    this.put(key, old);
    return old;
  }

  /** Adds a key that is absent. */
  put(key: number | string, value: V): void {
    if (this.current.size >= this.half) {
      this.older = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }
}

/**
 * The buckets of one Ingress's request limits (rps, rpm or both), at most `capacity` addresses.
 * ingress-nginx gives every Ingress its own zones, shared by all of its paths.
 */
export class RequestLimiter {
  private readonly buckets: RecentMap<Bucket[]>;

  constructor(
    readonly rates: readonly RequestRate[],
    capacity = DEFAULT_CAPACITY,
  ) {
    this.buckets = new RecentMap(capacity);
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Whether a request from `key` at `now` (ms) passes every rate; accounted only if it does. */
  take(key: number | string, now: number): boolean {
    // To the front, refused or not.
    const found = this.buckets.touch(key);
    if (found === undefined) {
      this.buckets.put(
        key,
        this.rates.map(() => ({ excess: 0, last: now })),
      );
      return true;
    }
    const rates = this.rates;
    for (let i = 0; i < rates.length; i++) {
      if (nextExcess(found[i], rates[i]!, now) > rates[i]!.burst) return false;
    }
    for (let i = 0; i < rates.length; i++) {
      const bucket = found[i]!;
      bucket.excess = nextExcess(bucket, rates[i]!, now);
      if (elapsed(bucket, now) !== 0) bucket.last = now;
    }
    return true;
  }
}

/**
 * limit_conn: requests in progress per address. A key leaves when its count returns to 0, so the
 * map holds only addresses with a request open; when `capacity` of them are, a new address is
 * refused (nginx: a zone that cannot allocate a node refuses with limit_conn_status).
 */
export class ConnectionLimiter {
  private readonly open = new Map<number | string, number>();

  constructor(
    readonly limit: number,
    readonly capacity = DEFAULT_CAPACITY,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Counts a request in; false (and nothing counted) when the address is at its limit. */
  acquire(key: number | string): boolean {
    const count = this.open.get(key) ?? 0;
    if (count >= this.limit) return false;
    if (count === 0 && this.open.size >= this.capacity) return false;
    this.open.set(key, count + 1);
    return true;
  }

  /** Counts a finished request out; once per successful acquire. */
  release(key: number | string): void {
    const count = this.open.get(key);
    if (count === undefined) return;
    if (count <= 1) this.open.delete(key);
    else this.open.set(key, count - 1);
  }
}
