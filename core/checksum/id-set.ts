// From per-object IDs to the published checksum: sort the IDs as byte strings, join them with
// ",", digest, lowercase hex. Duplicates stay (two objects with one ID count twice), as in
// Tengine-Ingress. The digest is MD5 in tengine mode (what Tengine producers write) and SHA-256
// in content mode: MD5 has practical chosen-prefix collisions, so an attestation resting on it
// could be matched by a crafted set.
import { isSortedUtf8, sortUtf8 } from "./byte-order";
import { hexDigest } from "./digest";
import type { ChecksumMode } from "./objects";

/** The digest of a mode's checksum: 32 hex digits in tengine mode, 64 in content mode. */
export const CHECKSUM_ALGORITHM = { tengine: "md5", content: "sha256" } as const;

/** The checksum of the IDs sorted by UTF-8 byte order and joined with ","; `ids` is kept. */
export function checksumOfIds(ids: readonly string[], mode: ChecksumMode): string {
  // A check in one pass is far cheaper than a sort, and published IDs usually come sorted.
  return checksumOfSortedIds(isSortedUtf8(ids) ? ids : sortUtf8([...ids]), mode);
}

/** As {@link checksumOfIds}, for IDs already in UTF-8 byte order. */
export function checksumOfSortedIds(sortedIds: readonly string[], mode: ChecksumMode): string {
  return hexDigest(CHECKSUM_ALGORITHM[mode], sortedIds.join(","));
}

export interface IdDiff {
  /** Published but not computed: objects the publisher attested that are absent or differ here. */
  missing: string[];
  /** Computed but not published: objects here that the publisher did not attest. */
  unexpected: string[];
}

/** The two-way difference of two ID multisets, each side sorted by UTF-8 byte order. */
export function diffIds(computed: readonly string[], published: readonly string[]): IdDiff {
  const remaining = countIds(published);
  const unexpected: string[] = [];
  for (const id of computed) {
    const count = remaining.get(id) ?? 0;
    if (count > 0) remaining.set(id, count - 1);
    else unexpected.push(id);
  }
  const missing: string[] = [];
  for (const [id, count] of remaining) {
    for (let i = 0; i < count; i++) missing.push(id);
  }
  return { missing: sortUtf8(missing), unexpected: sortUtf8(unexpected) };
}

/** How many times each ID occurs. */
export function countIds(ids: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}
