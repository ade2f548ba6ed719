// Byte order of UTF-8, without encoding: Go compares strings as bytes, and every checksum that
// Bulwark shares with Go producers (Tengine's sort.Strings) or external publishers depends on it.
//
// JavaScript compares strings by UTF-16 code units. That agrees with UTF-8 byte order (which is
// Unicode code point order) except where one string has a surrogate (U+D800..U+DFFF, the halves
// of a character above U+FFFF) and the other a character in U+E000..U+FFFF at the first
// difference: UTF-16 puts the surrogate first, UTF-8 puts it last. Moving those two ranges past
// each other at that one position gives code point order, hence byte order.

/** True when `text` has a code unit at or above U+D800, where UTF-16 and UTF-8 order can differ. */
const MAY_REORDER = /[\uD800-\uFFFF]/;

function fixUp(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/** Compares two strings as their UTF-8 bytes would compare: negative, zero or positive. */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixUp(x) - fixUp(y);
  }
  return a.length - b.length;
}

/**
 * Sorts in place by UTF-8 byte order and returns the array. The engine's own sort (UTF-16 order)
 * is used when no string reaches U+D800, since both orders then agree; that is every Kubernetes
 * name and every Tengine ID, and it is about a third faster than any comparator.
 */
export function sortUtf8<T extends string[]>(strings: T): T {
  if (strings.some(s => MAY_REORDER.test(s))) strings.sort(compareUtf8);
  else strings.sort();
  return strings;
}

/** Whether the strings are already in UTF-8 byte order (publishers usually sort their IDs). */
export function isSortedUtf8(strings: readonly string[]): boolean {
  for (let i = 1; i < strings.length; i++) {
    if (compareUtf8(strings[i - 1] ?? "", strings[i] ?? "") > 0) return false;
  }
  return true;
}
