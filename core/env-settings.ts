// Every Bulwark process reads its settings through these zod helpers: each reader names the
// variable in its error, so a typo stops the process with the name the operator set (never a
// silent NaN or default). Flags, where a program has them, set the same variables.
import { parseArgs } from "node:util";
import { z } from "zod";
import { parseRanges } from "./net/ranges";
import { parseSwitch } from "./switch";

/** A number from `min` to `max` (whole unless `integer: false`), `fallback` when unset. */
export function number(
  name: string,
  fallback: number,
  range: { min: number; max: number; integer?: boolean },
) {
  const { min, max, integer: whole = true } = range;
  return z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const value = Number(text);
      const bad =
        text.trim() === "" ||
        !Number.isFinite(value) ||
        (whole && !Number.isInteger(value)) ||
        value < min ||
        value > max;
      if (bad) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be ${whole ? "an integer" : "a number"} from ${min} to ${max}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return value;
    });
}

/** A number as `number` reads it, or undefined when unset (a feature that is off until set). */
export function optionalNumber(
  name: string,
  range: { min: number; max: number; integer?: boolean },
) {
  const read = number(name, range.min, range);
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const parsed = read.safeParse(text);
      if (parsed.success) return parsed.data;
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: "custom", message: issue.message });
      return z.NEVER;
    });
}

/** An integer from `min` to `max`, `fallback` when unset. */
export function integer(name: string, fallback: number, min: number, max: number) {
  return number(name, fallback, { min, max });
}

/** Seconds (fractions allowed) from `min` to `max`, `fallback` when unset; read as milliseconds. */
export function seconds(name: string, fallback: number, min: number, max = 86_400) {
  return number(name, fallback, { min, max, integer: false }).transform(s => s * 1000);
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
// Sticky: each part starts where the last ended (WHOLE_DURATION has checked the text).
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
const WHOLE_DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;

/**
 * Milliseconds of a Go-style duration ("500ms", "2m", "1h30m"), as operators write them for
 * Kubernetes components; a bare number is seconds. Undefined when invalid.
 */
export function parseDurationMs(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(value)) return Number(value) * 1000;
  if (!WHOLE_DURATION.test(value)) return undefined;
  let total = 0;
  for (const match of value.matchAll(DURATION_PART)) {
    total += Number(match[1]) * (UNITS_MS[match[2] ?? ""] ?? 0);
  }
  return total;
}

/** A duration (see parseDurationMs) of at least `minMs`, `fallback` when unset; read as ms. */
export function duration(name: string, fallback: string, minMs = 0) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDurationMs(text);
      if (ms === undefined || ms < minMs) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be a duration such as 500ms, 2m or 1h${minMs > 0 ? ` (at least ${minMs}ms)` : ""}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return ms;
    });
}

/** true/on or false/off (any case), `fallback` when unset. */
export function flag(name: string, fallback: boolean) {
  return z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const value = parseSwitch(text);
      if (value === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be true or false; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return value;
    });
}

/** One of `values`, `fallback` when unset. */
export function oneOf<const T extends readonly [string, ...string[]]>(
  name: string,
  values: T,
  fallback: T[number],
) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const found = values.find(v => v === text);
      if (found === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be one of ${values.join(", ")}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return found as T[number];
    });
}

/** LOG_LEVEL, the one log-level variable of every process. */
export const logLevel = () =>
  oneOf("LOG_LEVEL", ["error", "warn", "info", "debug"] as const, "info");

/** A value that must be set (`what` says where it comes from). */
export function required(name: string, what: string) {
  const message = `${name} is required (${what})`;
  return z.string({ error: message }).min(1, message);
}

/** Optional text that is not only spaces when set. */
export function optionalText(name: string, what: string) {
  return z
    .string()
    .optional()
    .refine(v => v === undefined || v.trim() !== "", `${name} must not be empty (${what})`);
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const OBJECT_NAME = /^[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/;

/** A Kubernetes namespace name, `fallback` when unset. */
export function namespaceName(name: string, fallback: string) {
  return z
    .string()
    .default(fallback)
    .refine(text => NAMESPACE.test(text), { message: `${name} must be a namespace name` });
}

/** A Kubernetes object name (DNS subdomain), `fallback` when unset ("": no default). */
export function objectName(name: string, fallback: string) {
  const text = fallback === "" ? z.string() : z.string().default(fallback);
  return text.refine(v => OBJECT_NAME.test(v) && v.length <= 253, {
    message: `${name} must be a Kubernetes object name`,
  });
}

/** A comma-separated list of namespace names; empty means none given. */
export function namespaceList(name: string) {
  return z
    .string()
    .default("")
    .transform((text, ctx) => {
      const list = text
        .split(",")
        .map(s => s.trim())
        .filter(Boolean);
      const bad = list.find(ns => !NAMESPACE.test(ns));
      if (bad !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name}: ${JSON.stringify(bad)} is not a namespace name`,
        });
        return z.NEVER;
      }
      return list;
    });
}

/**
 * A comma list of CIDRs or addresses, read as ingress-nginx reads proxy-real-ip-cidr (Go's
 * net.ParseCIDR / ParseIP); unset or empty: none. The value is the list in Go's spelling.
 */
export function ipRangeList(name: string) {
  return z
    .string()
    .default("")
    .transform((text, ctx) => {
      if (text.trim() === "") return [] as string[];
      const parsed = parseRanges(text);
      if (parsed.ok) return [...parsed.ranges.text];
      ctx.addIssue({
        code: "custom",
        message: `${name}: ${JSON.stringify(parsed.entry)} is neither an IP address nor a CIDR`,
      });
      return z.NEVER;
    });
}

/** Parses `env` with `schema`, throwing one error that lists every bad variable. */
export function readEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
  what: string,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new Error(`${what} settings: ${parsed.error.issues.map(i => i.message).join("; ")}`);
}

export type Loaded<T> = { ok: true; settings: T } | { ok: false; message: string };

/**
 * Parses variables with `schema`: empty ones count as unset (as a manifest's `value: ""` usually
 * means), except those in `emptyMeans` (a list where "" is a value: none); a failure is one line
 * naming the first bad variable.
 */
export function loadEnv<S extends z.ZodType>(
  schema: S,
  values: Record<string, string | undefined>,
  emptyMeans: readonly string[] = [],
): Loaded<z.output<S>> {
  const set = Object.fromEntries(
    Object.entries(values).filter(
      ([name, v]) => v !== undefined && (v !== "" || emptyMeans.includes(name)),
    ),
  );
  const parsed = schema.safeParse(set);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? "settings");
  const message = issue?.message ?? "invalid";
  return { ok: false, message: message.startsWith(field) ? message : `${field}: ${message}` };
}

/**
 * Reads `--name value` / `--name=value` flags (node:util parseArgs' tokens), each a string setting.
 * `known` maps each flag name to what it sets (a variable name), for the messages: an unknown
 * flag, a flag without a value, or a positional argument is one line naming it.
 */
export function readFlags(
  argv: readonly string[],
  known: Readonly<Record<string, string>>,
): { values: Record<string, string> } | { message: string } {
  const options = Object.fromEntries(
    Object.keys(known).map(name => [name, { type: "string" as const }]),
  );
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string> = {};
  for (const token of tokens) {
    if (token.kind === "positional")
      return { message: `unknown argument ${JSON.stringify(token.value)} (see --help)` };
    if (token.kind === "option-terminator")
      return { message: `unknown argument "--" (see --help)` };
    if (!Object.hasOwn(known, token.name))
      return { message: `unknown flag ${token.rawName} (see --help)` };
    if (token.value === undefined)
      return { message: `${token.rawName} needs a value (${known[token.name]})` };
    values[token.name] = token.value;
  }
  return { values };
}
