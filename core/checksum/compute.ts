// One-shot use: the ID function for a kind and mode, and the checksum of a whole list.
import type { FieldError, Result } from "../result";
import { sortUtf8 } from "./byte-order";
import { contentIngressIdResult, contentSecretIdResult } from "./content";
import { checksumOfSortedIds } from "./id-set";
import { type ChecksumKind, type ChecksumMode, type IdOptions, type ObjectOf } from "./objects";
import { tengineIngressIdResult, tengineSecretIdResult } from "./tengine";
import { objectKey } from "../object-key";

/** One object's ID, or why the object is left out of the checksum. */
export type IdFunction<K extends ChecksumKind> = (object: ObjectOf<K>) => Result<string>;

/** The ID function of a kind and mode. */
export function idFunction<K extends ChecksumKind>(
  kind: K,
  mode: ChecksumMode,
  options: IdOptions = {},
): IdFunction<K> {
  if (kind === "Ingress") {
    return mode === "tengine" ? tengineIngressIdResult : contentIngressIdResult;
  }
  return mode === "tengine"
    ? secret => tengineSecretIdResult(secret, options)
    : secret => contentSecretIdResult(secret, options);
}

export interface SkippedObject {
  /** `namespace/name` of the object. */
  key: string;
  reason: string;
}

export interface ComputedChecksum {
  checksum: string;
  /** Sorted by UTF-8 byte order, duplicates kept. */
  ids: string[];
  /** Objects left out of the checksum (an object that has no ID still serves, as in Tengine). */
  skipped: SkippedObject[];
}

/** The checksum of a list of objects of one kind, with the IDs it covers and what it left out. */
export function computeChecksum<K extends ChecksumKind>(
  kind: K,
  mode: ChecksumMode,
  objects: Iterable<ObjectOf<K>>,
  options: IdOptions = {},
): ComputedChecksum {
  const idOf = idFunction(kind, mode, options);
  const ids: string[] = [];
  const skipped: SkippedObject[] = [];
  for (const object of objects) {
    const result = idOf(object);
    if (result.ok) ids.push(result.value);
    else skipped.push({ key: objectKey(object), reason: skipReason(result.errors) });
  }
  sortUtf8(ids);
  return { checksum: checksumOfSortedIds(ids, mode), ids, skipped };
}

/** The messages of an ID function's errors, for a status or a log line. */
export function skipReason(errors: readonly FieldError[]): string {
  return errors.map(error => error.message).join("; ");
}
