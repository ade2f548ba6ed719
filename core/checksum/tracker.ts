// Incremental verification: the current objects of one kind and mode against the published
// checksum objects, where one changed object costs one ID computation and O(1) map updates, not
// a pass over 100k objects (DESIGN.md target: re-verify after one change in ≤ 5 ms).
//
// How: each key's ID is cached, so only a changed object is hashed again. The current IDs are
// kept as a multiset. For each published object that lists its ids, the MD5 of those ids is
// checked against its checksum once, when it is published; from then on only the difference
// between the two multisets is kept up to date. Equal multisets sort and join to the same text,
// so "its ids hash to its checksum and nothing differs" is exactly "the current checksum equals
// its checksum". A published object without ids (Tengine producers may leave them out), or
// whose ids do not hash to its checksum, falls back to the MD5 of the current IDs, cached until
// the next change; the sorted IDs it needs are kept sorted by insertion, not sorted again.
import type { Result } from "../result";
import { compareUtf8, sortUtf8 } from "./byte-order";
import { idFunction, skipReason, type IdFunction, type SkippedObject } from "./compute";
import { checksumOfIds, checksumOfSortedIds } from "./id-set";
import type { ChecksumKind, ChecksumMode, IdOptions, ObjectOf } from "./objects";

/** A published IngressCheckSum or SecretCheckSum, as far as verification needs it. */
export interface PublishedChecksum {
  /** Identifies the checksum object (e.g. `namespace/name`) and names it in reports. */
  name: string;
  /** `spec.checksum`: MD5, lowercase hex. */
  checksum: string;
  /** `spec.ids`, when the publisher listed them. */
  ids?: readonly string[];
  /** Orders checksum objects, the greatest being the newest: e.g. `metadata.creationTimestamp`. */
  order: string;
}

export interface DiffSummary {
  /** Published but not computed, sorted, at most `diffLimit`. */
  missing: string[];
  /** Computed but not published, sorted, at most `diffLimit`. */
  unexpected: string[];
  missingTotal: number;
  unexpectedTotal: number;
}

export interface PublishedReport {
  name: string;
  checksum: string;
  /** Whether the current IDs hash to its checksum. */
  matches: boolean;
  /**
   * Whether its own ids hash to its checksum; undefined when it lists none. False is a publisher
   * bug: the ids then explain nothing, and only the checksum itself is compared.
   */
  idsMatchChecksum: boolean | undefined;
  /** What differs between the current IDs and its ids; only when it lists ids and they differ. */
  diff?: DiffSummary;
}

export interface Verification {
  /** True when the current IDs hash to ANY published checksum, as in Tengine. */
  consistent: boolean;
  /** The newest published checksum object that matches. */
  matched?: string;
  /**
   * The newest published checksum object and what differs from it; undefined when nothing is
   * published. Whether "nothing published" passes (Tengine: the feature is off) is the caller's
   * call, as is refusing an empty object set.
   */
  newest?: PublishedReport;
}

export interface TrackerOptions<K extends ChecksumKind> extends IdOptions {
  /** Replaces the kind's and mode's ID function: for wrapping it (tests count calls with it). */
  idFunction?: IdFunction<K>;
  /** At most this many IDs on each side of a diff; defaults to 20. */
  diffLimit?: number;
}

interface PublishedState {
  readonly published: PublishedChecksum;
  /** True when the ids are listed and hash to the checksum: the multiset path applies. */
  readonly idsUsable: boolean;
  /** current count − published count, for every ID where they differ; only with listed ids. */
  readonly delta: Map<string, number>;
  /** Sum of |delta|: the size of the symmetric difference of the two multisets. */
  differing: number;
}

// Beyond this many insertions without a read, sorting afresh is cheaper than inserting in order
// (each insertion moves on average half of a 100k array).
const MAX_INSERTIONS_BETWEEN_READS = 1000;

/** The objects of one kind, checked in one mode against the checksum objects published for it. */
export class ChecksumTracker<K extends ChecksumKind> {
  readonly kind: K;
  readonly mode: ChecksumMode;
  readonly #idOf: IdFunction<K>;
  readonly #diffLimit: number;
  /** key → ID, or undefined for a skipped object. */
  readonly #ids = new Map<string, string | undefined>();
  readonly #skipped = new Map<string, string>();
  readonly #counts = new Map<string, number>();
  readonly #published = new Map<string, PublishedState>();
  #sorted: string[] | undefined;
  #insertionsSinceRead = 0;
  #checksum: string | undefined;

  constructor(kind: K, mode: ChecksumMode, options: TrackerOptions<K> = {}) {
    this.kind = kind;
    this.mode = mode;
    this.#idOf = options.idFunction ?? idFunction(kind, mode, options);
    this.#diffLimit = options.diffLimit ?? 20;
  }

  /** How many objects are tracked, skipped ones included. */
  get size(): number {
    return this.#ids.size;
  }

  /** Adds or replaces the object under `key`; returns its ID or why it is left out. */
  upsert(key: string, object: ObjectOf<K>): Result<string> {
    const result = this.#idOf(object);
    const before = this.#ids.get(key);
    const after = result.ok ? result.value : undefined;
    this.#ids.set(key, after);
    if (result.ok) this.#skipped.delete(key);
    else this.#skipped.set(key, skipReason(result.errors));
    if (before !== after) {
      if (before !== undefined) this.#count(before, -1);
      if (after !== undefined) this.#count(after, 1);
    }
    return result;
  }

  /** Forgets the object under `key`; false when there was none. */
  remove(key: string): boolean {
    if (!this.#ids.has(key)) return false;
    const before = this.#ids.get(key);
    this.#ids.delete(key);
    this.#skipped.delete(key);
    if (before !== undefined) this.#count(before, -1);
    return true;
  }

  /** How many IDs the checksum covers (tracked objects less skipped ones); O(1). */
  get idCount(): number {
    return this.#ids.size - this.#skipped.size;
  }

  /** The current IDs, sorted by UTF-8 byte order (a copy). */
  ids(): string[] {
    return this.#sortedIds().slice();
  }

  /** The current checksum: the digest of the sorted IDs joined with "," (MD5 or SHA-256 by mode). */
  checksum(): string {
    this.#checksum ??= checksumOfSortedIds(this.#sortedIds(), this.mode);
    return this.#checksum;
  }

  /**
   * The keys of the tracked objects whose ID is one of `ids` (to name the objects behind
   * unexpected IDs, which in tengine mode do not name them); in key order, at most `limit`.
   * One pass over the tracked objects: for a mismatch report, not for every change.
   */
  keysWithIds(ids: readonly string[], limit = 20): string[] {
    const wanted = new Set(ids);
    const keys: string[] = [];
    if (wanted.size === 0) return keys;
    for (const [key, id] of this.#ids) if (id !== undefined && wanted.has(id)) keys.push(key);
    return keys.sort().slice(0, limit);
  }

  /** The objects left out of the checksum, with why. */
  skipped(): SkippedObject[] {
    return [...this.#skipped].map(([key, reason]) => ({ key, reason }));
  }

  /**
   * Adds or replaces a published checksum object. Its ids are hashed and compared with the
   * current IDs once, here; publishing the same checksum and ids again only updates `order`.
   */
  publish(published: PublishedChecksum): void {
    const existing = this.#published.get(published.name);
    if (existing && samePublication(existing.published, published)) {
      this.#published.set(published.name, { ...existing, published });
      return;
    }
    const ids = published.ids;
    const idsUsable = ids !== undefined && checksumOfIds(ids, this.mode) === published.checksum;
    const delta = ids === undefined ? new Map<string, number>() : this.#deltaFrom(ids);
    let differing = 0;
    for (const difference of delta.values()) differing += Math.abs(difference);
    this.#published.set(published.name, { published, idsUsable, delta, differing });
  }

  /** Forgets a published checksum object; false when there was none. */
  unpublish(name: string): boolean {
    return this.#published.delete(name);
  }

  /** Checks the current IDs against every published checksum object. */
  verify(): Verification {
    const newestFirst = [...this.#published.values()].sort(byNewest);
    const newest = newestFirst[0];
    if (!newest) return { consistent: false };
    const matched = newestFirst.find(state => this.#matches(state));
    return {
      consistent: matched !== undefined,
      ...(matched && { matched: matched.published.name }),
      newest: this.#report(newest, matched === newest),
    };
  }

  /** How one published checksum object compares with the current IDs; undefined when unknown. */
  report(name: string): PublishedReport | undefined {
    const state = this.#published.get(name);
    return state && this.#report(state, this.#matches(state));
  }

  #matches(state: PublishedState): boolean {
    if (state.idsUsable) return state.differing === 0;
    return this.checksum() === state.published.checksum;
  }

  #report(state: PublishedState, matches: boolean): PublishedReport {
    const { name, checksum, ids } = state.published;
    const report: PublishedReport = {
      name,
      checksum,
      matches,
      idsMatchChecksum: ids === undefined ? undefined : state.idsUsable,
    };
    if (ids !== undefined && state.differing > 0) {
      report.diff = summarize(state.delta, this.#diffLimit);
    }
    return report;
  }

  /** current − published for every ID where the counts differ. */
  #deltaFrom(publishedIds: readonly string[]): Map<string, number> {
    const delta = new Map(this.#counts);
    for (const id of publishedIds) adjust(delta, id, -1);
    return delta;
  }

  #count(id: string, by: 1 | -1): void {
    adjust(this.#counts, id, by);
    this.#checksum = undefined;
    this.#keepSorted(id, by);
    for (const state of this.#published.values()) {
      if (state.published.ids === undefined) continue;
      const before = state.delta.get(id) ?? 0;
      adjust(state.delta, id, by);
      state.differing += Math.abs(before + by) - Math.abs(before);
    }
  }

  #keepSorted(id: string, by: 1 | -1): void {
    const sorted = this.#sorted;
    if (!sorted) return;
    if (++this.#insertionsSinceRead > MAX_INSERTIONS_BETWEEN_READS) {
      this.#sorted = undefined;
      return;
    }
    const at = lowerBound(sorted, id);
    if (by > 0) sorted.splice(at, 0, id);
    else if (sorted[at] === id) sorted.splice(at, 1);
    else throw new Error(`ChecksumTracker: ${id} is counted but not in the sorted IDs`);
  }

  #sortedIds(): string[] {
    this.#insertionsSinceRead = 0;
    if (this.#sorted) return this.#sorted;
    const ids: string[] = [];
    for (const [id, count] of this.#counts) {
      for (let i = 0; i < count; i++) ids.push(id);
    }
    this.#sorted = sortUtf8(ids);
    return this.#sorted;
  }
}

function adjust(counts: Map<string, number>, id: string, by: number): void {
  const count = (counts.get(id) ?? 0) + by;
  if (count === 0) counts.delete(id);
  else counts.set(id, count);
}

function samePublication(a: PublishedChecksum, b: PublishedChecksum): boolean {
  if (a.checksum !== b.checksum) return false;
  if (a.ids === b.ids) return true;
  if (a.ids === undefined || b.ids === undefined || a.ids.length !== b.ids.length) return false;
  return a.ids.every((id, i) => id === b.ids?.[i]);
}

function byNewest(a: PublishedState, b: PublishedState): number {
  const x = a.published;
  const y = b.published;
  if (x.order !== y.order) return x.order < y.order ? 1 : -1;
  return compareUtf8(x.name, y.name);
}

/** The first index whose ID is not below `id` in UTF-8 byte order. */
function lowerBound(sorted: readonly string[], id: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareUtf8(sorted[middle] ?? "", id) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function summarize(delta: ReadonlyMap<string, number>, limit: number): DiffSummary {
  const missing: string[] = [];
  const unexpected: string[] = [];
  for (const [id, difference] of delta) {
    const side = difference < 0 ? missing : unexpected;
    for (let i = 0; i < Math.abs(difference); i++) side.push(id);
  }
  return {
    missing: sortUtf8(missing).slice(0, limit),
    unexpected: sortUtf8(unexpected).slice(0, limit),
    missingTotal: missing.length,
    unexpectedTotal: unexpected.length,
  };
}
