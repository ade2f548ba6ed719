// Canonical JSON: one text for one value, so that a publisher in any language can reproduce the
// content-mode hash (../shared/DESIGN.md, "The checksum: two modes").
//
// The rules:
// - object keys sorted by the byte order of their UTF-8 encoding (Unicode code point order);
// - no whitespace anywhere; arrays keep their order;
// - strings and numbers written as ECMAScript's JSON.stringify writes them (shortest round-trip
//   numbers, `-0` as `0`; only `"`, `\` and control characters escaped, lone surrogates as
//   `\uXXXX`); the text is then hashed as UTF-8;
// - object members whose value is `undefined` are left out, as JSON.stringify does;
// - everything that is not JSON data is refused with a TypeError rather than guessed at:
//   non-finite numbers, bigint, functions, symbols, `undefined` outside an object member,
//   cycles, and objects other than plain ones and arrays (a Date or Map would otherwise vanish
//   into `{}`).
//
// For every key that Kubernetes allows (annotation keys, Secret data keys, API field names are
// ASCII), code point order equals UTF-16 order, so this output equals RFC 8785 (JCS) output and a
// JCS library reproduces it.
//
// Content mode hashes 100k objects in a full verify, so the usual path hands the engine's
// JSON.stringify a value whose objects already have their keys in order, which is about twice
// as fast as writing the text here (measured on 100k Ingresses). Objects whose keys are in order
// (most of an API object: Go writes map keys sorted, and many structs have one or two fields)
// are reused as they are; only the others are copied with their keys inserted in order; a class
// instance is always copied (own enumerable properties; a toJSON method is not called).
// Insertion order cannot express every order, though: integer-like keys ("10", "9") always come
// first, in numeric order, and "__proto__" cannot be an own key of a literal. A value with such
// keys, or nested deeper than any API object, is written by the reference writer below instead,
// which also finds cycles. The tests hold both to the same output.
import { compareUtf8 } from "./byte-order";

/** The canonical JSON text of `value`; throws a TypeError for anything that is not JSON data. */
export function canonicalJson(value: unknown): string {
  const ordered = inKeyOrder(value, 0);
  return ordered === USE_WRITER ? write(value, []) : JSON.stringify(ordered);
}

/** The reference writer alone, without the fast path: exported for tests. */
export function canonicalJsonByWriter(value: unknown): string {
  return write(value, []);
}

const USE_WRITER: unique symbol = Symbol("use the writer");
/** Deeper than any Kubernetes object; beyond it the writer takes over and checks for cycles. */
const MAX_FAST_DEPTH = 64;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** `value` itself when JSON.stringify already writes it canonically, else an ordered copy. */
function inKeyOrder(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return checkedScalar(value);
  if (depth > MAX_FAST_DEPTH) return USE_WRITER;
  return Array.isArray(value) ? arrayInKeyOrder(value, depth) : objectInKeyOrder(value, depth);
}

function arrayInKeyOrder(items: unknown[], depth: number): unknown {
  // An Array subclass could carry a toJSON: copy it into a plain array.
  let copy: unknown[] | undefined =
    Object.getPrototypeOf(items) === Array.prototype ? undefined : [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const ordered = inKeyOrder(item, depth + 1);
    if (ordered === USE_WRITER) return USE_WRITER;
    if (ordered !== item) copy ??= items.slice(0, i);
    copy?.push(ordered);
  }
  return copy ?? items;
}

function objectInKeyOrder(value: object, depth: number): unknown {
  const record = value as Record<string, unknown>;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    const sorted = keysSorted(record);
    if (sorted === USE_WRITER) return USE_WRITER;
    return sorted ? reusedUnlessChanged(record, depth) : orderedCopy(record, depth);
  }
  // A class instance could carry a toJSON or getters for JSON.stringify to find: always copy it.
  checkPlain(value);
  if (Object.keys(record).some(needsWriter)) return USE_WRITER;
  return orderedCopy(record, depth);
}

/**
 * Whether the object's keys come in canonical order, or USE_WRITER for keys that insertion order
 * cannot express. Uses for-in, which allocates nothing (unlike Object.keys): on 100k objects
 * the garbage alone costs a tenth of the budget.
 */
function keysSorted(record: Record<string, unknown>): boolean | typeof USE_WRITER {
  let previous: string | undefined;
  let sorted = true;
  for (const key in record) {
    if (needsWriter(key)) return USE_WRITER;
    if (previous !== undefined && compareUtf8(previous, key) > 0) sorted = false;
    previous = key;
  }
  return sorted;
}

/** The object itself when no member changes; else a copy from the first changed member on. */
function reusedUnlessChanged(record: Record<string, unknown>, depth: number): unknown {
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    const member = record[key];
    if (member === undefined) continue;
    const ordered = inKeyOrder(member, depth + 1);
    if (ordered === USE_WRITER) return USE_WRITER;
    if (ordered !== member) copy ??= membersBefore(record, key);
    if (copy) copy[key] = ordered;
  }
  return copy ?? record;
}

/** A new object with the members before `stop`, which need no change. */
function membersBefore(record: Record<string, unknown>, stop: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in record) {
    if (key === stop) break;
    if (record[key] !== undefined) copy[key] = record[key];
  }
  return copy;
}

/** A new object with the keys inserted in canonical order; its keys need no writer. */
function orderedCopy(record: Record<string, unknown>, depth: number): unknown {
  const copy: Record<string, unknown> = {};
  for (const key of sortKeys(Object.keys(record))) {
    const member = record[key];
    if (member === undefined) continue;
    const ordered = inKeyOrder(member, depth + 1);
    if (ordered === USE_WRITER) return USE_WRITER;
    copy[key] = ordered;
  }
  return copy;
}

/**
 * Keys that insertion order cannot place: array indices, which objects order numerically before
 * all other keys, and "__proto__", which a literal assignment does not make an own key.
 */
function needsWriter(key: string): boolean {
  const first = key.charCodeAt(0);
  if (first === 0x5f) return key === "__proto__";
  if (first < 0x30 || first > 0x39) return false;
  return ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1;
}

/** Primitives as JSON.stringify would write them, refusing what it would drop or mangle. */
function checkedScalar(value: unknown): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not finite`);
      return value;
    default:
      throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
  }
}

/** Class instances (e.g. client-node's V1Ingress) are fine; Date, Map, Buffer and such are not. */
function checkPlain(value: object): void {
  const tag = Object.prototype.toString.call(value);
  if (tag !== "[object Object]") throw new TypeError(`canonicalJson: cannot encode ${tag}`);
}

/** Sorts in place by UTF-8 byte order: insertion sort for the few keys an object usually has. */
function sortKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort(compareUtf8);
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] ?? "";
    let j = i - 1;
    for (; j >= 0 && compareUtf8(keys[j] ?? "", key) > 0; j--) keys[j + 1] = keys[j] ?? "";
    keys[j + 1] = key;
  }
  return keys;
}

// The reference writer: builds the text itself, so any key order can be expressed.

function write(value: unknown, ancestors: object[]): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(checkedScalar(value));
  if (ancestors.includes(value)) throw new TypeError("canonicalJson: the value has a cycle");
  ancestors.push(value);
  const text = Array.isArray(value) ? writeArray(value, ancestors) : writeObject(value, ancestors);
  ancestors.pop();
  return text;
}

function writeArray(items: unknown[], ancestors: object[]): string {
  let text = "[";
  for (let i = 0; i < items.length; i++) {
    if (i > 0) text += ",";
    text += write(items[i], ancestors);
  }
  return text + "]";
}

function writeObject(value: object, ancestors: object[]): string {
  checkPlain(value);
  const record = value as Record<string, unknown>;
  let text = "{";
  let first = true;
  for (const key of sortKeys(Object.keys(record))) {
    const member = record[key];
    if (member === undefined) continue;
    if (!first) text += ",";
    first = false;
    text += JSON.stringify(key) + ":" + write(member, ancestors);
  }
  return text + "}";
}
