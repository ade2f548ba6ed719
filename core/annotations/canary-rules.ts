// Canary rules between fields, run once every field parsed (ingress-nginx's "configured but not
// enabled" and friends), and the typed config the gateway compiles.
import { canaryFields, canaryKey, type CanaryField, type CanaryFields } from "./canary-fields";
import type { HeaderAction, ModOperator, QueryParam } from "./canary-values";
import { quote } from "./validators";

export interface ModRule {
  divisor: number;
  operator: ModOperator;
  remainder: number;
}

/**
 * How a source's value routes to the canary. "always": the value "always" does (and, as in
 * ingress-nginx, "never" sends the request to main). Precedence: values, pattern, mod, always.
 * Tengine compares values case-insensitively, ingress-nginx exactly: the consumer picks.
 */
export type CanaryMatch =
  | { kind: "always" }
  | { kind: "values"; values: string[] }
  | { kind: "pattern"; pattern: string }
  | ({ kind: "mod" } & ModRule);

export interface CanarySource {
  name: string;
  match: CanaryMatch;
}

export interface CanaryActions {
  requestAddHeaders: HeaderAction[];
  requestAppendHeaders: HeaderAction[];
  requestAddQuery: QueryParam[];
  responseAddHeaders: HeaderAction[];
  responseAppendHeaders: HeaderAction[];
}

export interface CanaryConfig {
  /** canary: "true". False with only weightTotal set is a main ingress carrying Tengine's total. */
  enabled: boolean;
  weight: number | undefined;
  /** As set on this ingress; the consumer falls back to the main ingress's, then to 100. */
  weightTotal: number | undefined;
  header: CanarySource | undefined;
  cookie: CanarySource | undefined;
  query: CanarySource | undefined;
  actions: CanaryActions;
}

export const DEFAULT_CANARY_WEIGHT_TOTAL = 100;

export interface CanaryProblem {
  field: CanaryField;
  message: string;
}

// Everything but the flag itself and canary-weight-total, which Tengine reads from the main
// ingress (no canary) and ingress-nginx's own check leaves out too.
const CANARY_ONLY = (Object.keys(canaryFields) as CanaryField[]).filter(
  f => f !== "enabled" && f !== "weightTotal",
);

const NEEDS_SOURCE = [
  ["headerValue", "header"],
  ["headerPattern", "header"],
  ["cookieValue", "cookie"],
  ["queryValue", "query"],
] as const satisfies readonly (readonly [CanaryField, CanaryField])[];

const MOD_FIELDS = ["modDivisor", "modOperator", "modRemainder"] as const;

/** Every rule between fields that the values break; empty when the combination is valid. */
export function canaryProblems(v: CanaryFields): CanaryProblem[] {
  if (v.enabled !== true) {
    const message = `needs ${canaryKey("enabled")}: "true" (configured but not enabled)`;
    return CANARY_ONLY.filter(f => v[f] !== undefined).map(field => ({ field, message }));
  }
  const problems: CanaryProblem[] = NEEDS_SOURCE.filter(
    ([field, source]) => v[field] !== undefined && v[source] === undefined,
  ).map(([field, source]) => ({ field, message: `needs ${canaryKey(source)}` }));
  problems.push(...modProblems(v));
  return problems;
}

function modProblems(v: CanaryFields): CanaryProblem[] {
  const set = MOD_FIELDS.filter(f => v[f] !== undefined);
  if (set.length === 0) return [];
  if (set.length < MOD_FIELDS.length) {
    const missing = MOD_FIELDS.filter(f => v[f] === undefined).map(canaryKey);
    const message = `needs ${missing.join(" and ")} too: a mod rule takes all three`;
    return set.map(field => ({ field, message }));
  }
  const problems: CanaryProblem[] = [];
  if (v.header === undefined && v.cookie === undefined && v.query === undefined) {
    const sources = [canaryKey("header"), canaryKey("cookie"), canaryKey("query")].join(", ");
    problems.push({
      field: "modDivisor",
      message: `needs one of ${sources}: its value is divided`,
    });
  }
  const divisor = v.modDivisor ?? 0;
  const remainder = v.modRemainder ?? 0;
  if (remainder >= divisor) {
    const expected = `an integer between 0 and ${divisor - 1} (below ${canaryKey("modDivisor")})`;
    problems.push({
      field: "modRemainder",
      message: `expected ${expected}, got ${quote(String(remainder))}`,
    });
  }
  return problems;
}

function modRule(v: CanaryFields): ModRule | undefined {
  if (v.modDivisor === undefined || v.modOperator === undefined || v.modRemainder === undefined) {
    return undefined;
  }
  return { divisor: v.modDivisor, operator: v.modOperator, remainder: v.modRemainder };
}

function source(
  name: string | undefined,
  values: string[] | undefined,
  pattern: string | undefined,
  mod: ModRule | undefined,
): CanarySource | undefined {
  if (name === undefined) return undefined;
  if (values !== undefined) return { name, match: { kind: "values", values } };
  if (pattern !== undefined) return { name, match: { kind: "pattern", pattern } };
  if (mod !== undefined) return { name, match: { kind: "mod", ...mod } };
  return { name, match: { kind: "always" } };
}

/** The config, from fields that passed canaryProblems. */
export function toCanaryConfig(v: CanaryFields): CanaryConfig {
  const mod = modRule(v);
  return {
    enabled: v.enabled ?? false,
    weight: v.weight,
    weightTotal: v.weightTotal,
    header: source(v.header, v.headerValue, v.headerPattern, mod),
    cookie: source(v.cookie, v.cookieValue, undefined, mod),
    query: source(v.query, v.queryValue, undefined, mod),
    actions: {
      requestAddHeaders: v.requestAddHeader ?? [],
      requestAppendHeaders: v.requestAppendHeader ?? [],
      requestAddQuery: v.requestAddQuery ?? [],
      responseAddHeaders: v.responseAddHeader ?? [],
      responseAppendHeaders: v.responseAppendHeader ?? [],
    },
  };
}

/** Weights and totals that ingress-nginx reads otherwise than they look (balancer.lua). */
function weightWarnings(config: CanaryConfig): string[] {
  const { weight = 0, weightTotal } = config;
  const warnings: string[] = [];
  const DEFAULT = DEFAULT_CANARY_WEIGHT_TOTAL;
  if (weightTotal !== undefined && weightTotal < DEFAULT) {
    warnings.push(
      `${canaryKey("weightTotal")} is ${weightTotal}: a total below ${DEFAULT} reads as ${DEFAULT}, as in ingress-nginx`,
    );
  }
  if (!config.enabled) return warnings;
  if (weightTotal !== undefined && weight > Math.max(weightTotal, DEFAULT)) {
    warnings.push(
      `${canaryKey("weight")} is ${weight}, above ${canaryKey("weightTotal")} ${Math.max(weightTotal, DEFAULT)}: every request that no rule decides goes to the canary`,
    );
  }
  if (weight > DEFAULT && weightTotal === undefined) {
    warnings.push(
      `${canaryKey("weight")} is ${weight}, above the default total of ${DEFAULT}: ` +
        `set ${canaryKey("weightTotal")} here or on the main ingress`,
    );
  }
  return warnings;
}

/** Legal settings that probably do not do what was meant. */
export function canaryWarnings(config: CanaryConfig, present: ReadonlySet<CanaryField>): string[] {
  const warnings: string[] = [];
  const sources = [config.header, config.cookie, config.query];
  if (present.has("headerPattern") && present.has("headerValue")) {
    warnings.push(
      `${canaryKey("headerPattern")} is ignored because ${canaryKey("headerValue")} is set`,
    );
  }
  if (present.has("modDivisor") && !sources.some(s => s?.match.kind === "mod")) {
    warnings.push(
      `${canaryKey("modDivisor")} and the other canary-mod-* are ignored: ` +
        "every canary-by-* source here matches by value list or pattern, which take precedence",
    );
  }
  warnings.push(...weightWarnings(config));
  if (config.enabled && config.weight === undefined && sources.every(s => s === undefined)) {
    warnings.push(
      `${canaryKey("enabled")} is "true" but no canary-by-* or ${canaryKey("weight")} is set: ` +
        "the canary receives no traffic",
    );
  }
  return warnings;
}
