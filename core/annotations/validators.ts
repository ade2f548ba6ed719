// Small parsers shared by every annotation family. Kubernetes annotation values are always strings:
// each parser accepts one spelling and, when the value is wrong, says what it expected and what it
// got. Nothing here falls back to a default (ingress-nginx does, and hides mistakes).
import { z } from "zod";
import { parseGoBool, parseGoInt } from "../go-strconv";
import { NGINX_ANNOTATION_PREFIX } from "../names";
import { parseRanges, type IpRanges } from "../net/ranges";
import { quote } from "../result";

// Annotation parsers quote what they refuse with it; it lives with Result, for every message.
export { quote };

/** A parsed value, or the full message of a denial. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export function good<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

/** `expected <expected>, got "<raw>"`, with an optional detail in parentheses. */
export function bad(expected: string, raw: string, detail?: string): Parsed<never> {
  const suffix = detail === undefined ? "" : ` (${detail})`;
  return { ok: false, message: `expected ${expected}, got ${quote(raw)}${suffix}` };
}

/** The full annotation key for a name under our prefix; a name with its own prefix is whole. */
export function annotationKey(name: string): string {
  return name.includes("/") ? name : `${NGINX_ANNOTATION_PREFIX}${name}`;
}

// The spellings to write; strconv.ParseBool's other ten ("1", "T", "True"…) are read too.
const BOOL_EXPECTED = `"true" or "false"`;

/** A boolean as ingress-nginx reads it, with Go's strconv.ParseBool: twelve spellings, no spaces. */
export function parseBool(raw: string): Parsed<boolean> {
  const value = parseGoBool(raw);
  return value === undefined ? bad(BOOL_EXPECTED, raw) : good(value);
}

/**
 * An integer in [min, max], as ingress-nginx reads it with Go's strconv.Atoi: an optional sign and
 * decimal digits ("007", "+5"), no unit, no surrounding space.
 */
export function parseIntIn(raw: string, min: number, max: number, unit = ""): Parsed<number> {
  const n = Number(parseGoInt(raw) ?? NaN);
  if (Number.isSafeInteger(n) && n >= min && n <= max) return good(n);
  return bad(`an integer${unit} between ${min} and ${max}`, raw);
}

/** A decimal integer of at least min, up to 2^53-1. */
export function parseIntFrom(raw: string, min: number): Parsed<number> {
  const parsed = parseIntIn(raw, min, Number.MAX_SAFE_INTEGER);
  return parsed.ok ? parsed : bad(`an integer of ${min} or more`, raw);
}

// Node's timers overflow past 2^31-1 ms, so no timeout in seconds may go beyond this.
export const MAX_TIMEOUT_SECONDS = Math.floor(0x7fffffff / 1000);

/** ingress-nginx timeouts are unitless whole seconds ("60", not "60s"); ValidateInt rejects units. */
export function parseSeconds(raw: string): Parsed<number> {
  const parsed = parseIntIn(raw, 1, MAX_TIMEOUT_SECONDS, " number of seconds");
  if (parsed.ok || !/^[0-9]+s$/.test(raw)) return parsed;
  return bad(`an integer number of seconds between 1 and ${MAX_TIMEOUT_SECONDS}`, raw, "no unit");
}

const SIZE = /^([0-9]+)([kKmMgG]?)$/;
const SIZE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** nginx size syntax (`1024`, `8k`, `10m`, `1g`) in bytes; a size of 0 means no limit, as in nginx. */
export function parseSize(raw: string): Parsed<number | "unlimited"> {
  const match = SIZE.exec(raw);
  const multiplier = SIZE_UNITS[(match?.[2] ?? "").toLowerCase()] ?? 0;
  const bytes = Number(match?.[1] ?? NaN) * multiplier;
  if (!match || !Number.isSafeInteger(bytes)) {
    return bad(
      `a size in bytes with an optional k, m or g suffix (e.g. "8m", "0" for no limit)`,
      raw,
    );
  }
  return good(bytes === 0 ? "unlimited" : bytes);
}

/** RFC 9110 token: header names, cookie names, HTTP methods. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/** Why a free-text entry (a value to match or to send) is unusable, or undefined when it is fine. */
export function textProblem(entry: string): string | undefined {
  if (entry === "") return "is empty";
  if (hasControlCharacter(entry)) return "has a control character";
  if (entry.trim() !== entry) return "has leading or trailing spaces";
  return undefined;
}

export interface ListRule {
  /** Human words for the whole value, e.g. `header values separated by "||"`. */
  expected: string;
  separator: string;
  max: number;
  /** Why one non-empty entry is unusable ("has …", "is …"), or undefined. */
  entryProblem: (entry: string) => string | undefined;
  /** Trim each entry first (comma lists written as "a, b"). */
  trim?: boolean;
}

/** A separated list: at most `max` entries, each one checked; no empty entries. */
export function parseList(raw: string, rule: ListRule): Parsed<string[]> {
  const expected = `${rule.expected} (at most ${rule.max})`;
  const entries = raw.split(rule.separator).map(e => (rule.trim ? e.trim() : e));
  if (entries.length > rule.max) return bad(expected, raw, `${entries.length} entries`);
  for (const [i, entry] of entries.entries()) {
    if (entry === "") return bad(expected, raw, `entry ${i + 1} is empty`);
    const problem = rule.entryProblem(entry);
    if (problem !== undefined)
      return bad(expected, raw, `entry ${i + 1} ${quote(entry)} ${problem}`);
  }
  return good(entries);
}

/** A zod schema for one annotation value, run through a parser above. */
export function annotation<T>(parse: (raw: string) => Parsed<T>) {
  return z
    .string({ error: issue => `expected a string, got ${typeof issue.input}` })
    .transform((raw, ctx) => {
      const parsed = parse(raw);
      if (parsed.ok) return parsed.value;
      ctx.issues.push({ code: "custom", message: parsed.message, input: raw });
      return z.NEVER;
    });
}

/** A comma list of IP addresses or CIDRs, as ingress-nginx's ParseIPNets reads it (core/net/ranges.ts). */
export function parseIpRanges(raw: string): Parsed<IpRanges> {
  const parsed = parseRanges(raw);
  if (parsed.ok) return good(parsed.ranges);
  return bad(IP_RANGES_EXPECTED, raw, `${quote(parsed.entry)} is neither`);
}

export const IP_RANGES_EXPECTED = "a comma-separated list of IP addresses or CIDRs";
