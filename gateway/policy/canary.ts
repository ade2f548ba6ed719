// Which backend answers a request on a host/path that has canaries: the decision as one pure
// function over the request's header, cookie and query values, so the table of cases from
// ingress-nginx's and Tengine-Ingress's documentation can be tested directly.
//
// Order (Tengine's setCanaryPriority, and ingress-nginx's header > cookie > weight for its one
// canary): every canary's header rule in creation order, then cookie rules, then query rules;
// the first match wins. A header or cookie rule without a value list treats "always" as a match
// and "never" as "main, stop evaluating" (ingress-nginx). With no match, one random draw over
// the weight canaries' ranges, the rest of the total going to main. A chosen canary without a
// ready endpoint falls back to main, as Tengine's proxy does.
import type { CanaryActions, CanaryConfig, CanaryMatch } from "../../core/annotations/canary";
import { DEFAULT_CANARY_WEIGHT_TOTAL } from "../../core/annotations/canary";
import { compileLinear } from "../../core/patterns/linear-regex";

/** How value lists and "always"/"never" compare: ingress-nginx exactly, Tengine ignoring case. */
export type ValueCompare = "exact" | "case-insensitive";

export type SourceKind = "header" | "cookie" | "query";

interface CompiledSource {
  kind: SourceKind;
  name: string;
  /** "match", "never" (main, stop) or undefined (fall through), for the request's value. */
  test: (value: string | undefined) => "match" | "never" | undefined;
}

export interface CompiledCanary {
  /** Names the canary in logs and metrics: its ingress's namespace/name. */
  id: string;
  sources: CompiledSource[];
  weight: number;
  weightTotal: number | undefined;
  actions: CanaryActions;
}

/** What the request offers: header names are lower case, as Node gives them. */
export interface RequestValues {
  header(name: string): string | undefined;
  cookie(name: string): string | undefined;
  query(name: string): string | undefined;
}

export type CanaryDecision =
  | { target: "main"; reason: string }
  | { target: "canary"; id: string; reason: string; actions: CanaryActions };

const MOD_TESTS = {
  "==": (a: number, b: number) => a === b,
  ">": (a: number, b: number) => a > b,
  ">=": (a: number, b: number) => a >= b,
  "<": (a: number, b: number) => a < b,
  "<=": (a: number, b: number) => a <= b,
} as const;

const DIGITS = /^[0-9]+$/;

function matcher(match: CanaryMatch, compare: ValueCompare): CompiledSource["test"] {
  const fold = compare === "exact" ? (s: string) => s : (s: string) => s.toLowerCase();
  switch (match.kind) {
    case "always":
      return value => {
        if (value === undefined) return undefined;
        const folded = fold(value);
        return folded === "always" ? "match" : folded === "never" ? "never" : undefined;
      };
    case "values": {
      const values = new Set(match.values.map(fold));
      return value => (value !== undefined && values.has(fold(value)) ? "match" : undefined);
    }
    case "pattern": {
      // Compiled once per configuration, on the linear-time engine; admission proved it compiles.
      const pattern = compileLinear(match.pattern);
      return value => (value !== undefined && pattern.test(value) ? "match" : undefined);
    }
    case "mod": {
      const relation = MOD_TESTS[match.operator];
      // Tengine: atoi(value) % divisor OP remainder; a value that is not a number never matches.
      return value =>
        value !== undefined &&
        DIGITS.test(value) &&
        relation(Number(BigInt(value) % BigInt(match.divisor)), match.remainder)
          ? "match"
          : undefined;
    }
  }
}

/** Compiles one canary ingress's config; `id` names it in decisions. */
export function compileCanary(
  id: string,
  config: CanaryConfig,
  compare: ValueCompare = "exact",
): CompiledCanary {
  const sources: CompiledSource[] = [];
  for (const kind of ["header", "cookie", "query"] as const) {
    const source = config[kind];
    if (source === undefined) continue;
    // HTTP header names are case-insensitive and Node lower-cases them.
    const name = kind === "header" ? source.name.toLowerCase() : source.name;
    sources.push({ kind, name, test: matcher(source.match, compare) });
  }
  return {
    id,
    sources,
    weight: config.weight ?? 0,
    weightTotal: config.weightTotal,
    actions: config.actions,
  };
}

function valueOf(request: RequestValues, kind: SourceKind, name: string): string | undefined {
  return kind === "header"
    ? request.header(name)
    : kind === "cookie"
      ? request.cookie(name)
      : request.query(name);
}

interface Rule {
  canary: CompiledCanary;
  source: CompiledSource;
}

/** Every canary's rules in evaluation order: all header rules, then cookie, then query. */
function orderedRules(canaries: readonly CompiledCanary[]): Rule[] {
  return (["header", "cookie", "query"] as const).flatMap(kind =>
    canaries.flatMap(canary =>
      canary.sources.filter(s => s.kind === kind).map(source => ({ canary, source })),
    ),
  );
}

function byRule(
  rules: readonly Rule[],
  request: RequestValues,
): { canary?: CompiledCanary; never?: boolean; reason: string } | undefined {
  for (const { canary, source } of rules) {
    const value = valueOf(request, source.kind, source.name);
    const outcome = source.test(value);
    if (outcome === undefined) continue;
    // Built only for the rule that decides: the others cost no string.
    const reason = `${source.kind} ${source.name}=${value ?? ""}`;
    return outcome === "never" ? { never: true, reason } : { canary, reason };
  }
  return undefined;
}

/**
 * The weight total: the main ingress's canary-weight-total (Tengine reads it there), else the
 * largest a canary sets (ingress-nginx sets it on the canary), else 100.
 */
export function weightTotal(
  canaries: readonly CompiledCanary[],
  mainTotal: number | undefined,
): number {
  if (mainTotal !== undefined) return mainTotal;
  const totals = canaries.map(c => c.weightTotal).filter((t): t is number => t !== undefined);
  return totals.length > 0 ? Math.max(...totals) : DEFAULT_CANARY_WEIGHT_TOTAL;
}

function byWeight(
  canaries: readonly CompiledCanary[],
  total: number,
  random: () => number,
): CompiledCanary | undefined {
  if (!canaries.some(c => c.weight > 0)) return undefined;
  // One integer draw in [0, total): canary ranges first, in creation order, main gets the rest.
  const draw = Math.floor(random() * total);
  let upTo = 0;
  for (const canary of canaries) {
    upTo += canary.weight;
    if (draw < upTo) return canary;
  }
  return undefined;
}

/** The canaries of one host/path, compiled once per configuration. */
export interface CanaryGroup {
  /** In creation order. */
  canaries: readonly CompiledCanary[];
  rules: readonly Rule[];
  total: number;
}

/** `mainWeightTotal`: the main ingress's canary-weight-total, when it sets one. */
export function canaryGroup(
  canaries: readonly CompiledCanary[],
  mainWeightTotal: number | undefined,
): CanaryGroup {
  return { canaries, rules: orderedRules(canaries), total: weightTotal(canaries, mainWeightTotal) };
}

export interface CanaryContext {
  /** Whether a canary (by id) has a ready endpoint now. */
  available: (id: string) => boolean;
  /** A number in [0, 1); Math.random in the gateway, fixed in tests. */
  random: () => number;
}

export function decideCanary(
  group: CanaryGroup,
  context: CanaryContext,
  request: RequestValues,
): CanaryDecision {
  if (group.canaries.length === 0) return { target: "main", reason: "no canary" };
  const rule = byRule(group.rules, request);
  if (rule?.never) return { target: "main", reason: `${rule.reason} (never)` };
  const reason = rule?.reason ?? "weight";
  const chosen = rule?.canary ?? byWeight(group.canaries, group.total, context.random);
  if (chosen === undefined) return { target: "main", reason };
  if (!context.available(chosen.id)) {
    return { target: "main", reason: `${reason}: canary ${chosen.id} has no ready endpoint` };
  }
  return { target: "canary", id: chosen.id, reason, actions: chosen.actions };
}
