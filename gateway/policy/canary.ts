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
import {
  compileLinear,
  matchSteps,
  MAX_MATCH_STEPS,
  type LinearPattern,
} from "../../core/patterns/linear-regex";

/**
 * The longest value a pattern is run on; a longer one does not match (main). In ingress-nginx a
 * header line over 8 KiB never reaches the canary's match (nginx's default
 * large_client_header_buffers answers 400 first), but here a head may be 64 KiB, and a match costs
 * up to (program × value): a pattern at its bound took 1.5 s on a 64 KiB value, 235 ms on 8 KiB
 * (hack/bench/pattern-cost.ts).
 */
export const MAX_PATTERN_VALUE = 8 * 1024;

/** How value lists and "always"/"never" compare: ingress-nginx exactly, Tengine ignoring case. */
export type ValueCompare = "exact" | "case-insensitive";

export type SourceKind = "header" | "cookie" | "query";

interface CompiledSource {
  kind: SourceKind;
  name: string;
  /** A pattern rule's pattern: its matches are charged to the request's MAX_MATCH_STEPS. */
  pattern?: LinearPattern | undefined;
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

function matcher(
  match: CanaryMatch,
  compare: ValueCompare,
): Pick<CompiledSource, "test" | "pattern"> {
  if (match.kind === "pattern") {
    // Compiled once per configuration, on the linear-time engine; admission proved it compiles.
    const pattern = compileLinear(match.pattern);
    const test = (value: string | undefined) =>
      value !== undefined && value.length <= MAX_PATTERN_VALUE && pattern.test(value)
        ? ("match" as const)
        : undefined;
    return { test, pattern };
  }
  return { test: valueMatcher(match, compare) };
}

function valueMatcher(
  match: Exclude<CanaryMatch, { kind: "pattern" }>,
  compare: ValueCompare,
): CompiledSource["test"] {
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
    // HTTP header names are case-insensitive and Node lower-cases them. ingress-nginx reads the
    // header as ngx.var["http_" .. name with "-" as "_"], which nginx matches against the
    // header's name with "-" as "_": so "X_Canary" names the header X-Canary.
    const name = kind === "header" ? source.name.toLowerCase().replaceAll("_", "-") : source.name;
    sources.push({ kind, name, ...matcher(source.match, compare) });
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
  let steps = 0;
  for (const { canary, source } of rules) {
    const value = valueOf(request, source.kind, source.name);
    if (source.pattern !== undefined && value !== undefined && value.length <= MAX_PATTERN_VALUE) {
      // A pattern the request cannot afford does not match (main), as a value over 8 KiB.
      const cost = matchSteps(source.pattern, value);
      if (steps + cost > MAX_MATCH_STEPS) continue;
      steps += cost;
    }
    const outcome = source.test(value);
    if (outcome === undefined) continue;
    // Built only for the rule that decides: the others cost no string.
    const reason = `${source.kind} ${source.name}=${value ?? ""}`;
    return outcome === "never" ? { never: true, reason } : { canary, reason };
  }
  return undefined;
}

/**
 * The total a canary's weight is out of: its own canary-weight-total (ingress-nginx sets it on
 * the canary), else the main ingress's (Tengine reads it there), else 100; and, as balancer.lua
 * does (`if weightTotal > 100 then ... end`), never below 100.
 */
export function effectiveTotal(own: number | undefined, main: number | undefined): number {
  const total = own ?? main ?? DEFAULT_CANARY_WEIGHT_TOTAL;
  return total > DEFAULT_CANARY_WEIGHT_TOTAL ? total : DEFAULT_CANARY_WEIGHT_TOTAL;
}

/**
 * Each canary's share of the requests no rule decides: weight / total, capped at 1
 * (ingress-nginx's `math.random(total) <= weight` sends everything when weight ≥ total).
 */
function sharesOf(canaries: readonly CompiledCanary[], mainTotal: number | undefined): number[] {
  return canaries.map(c => Math.min(c.weight / effectiveTotal(c.weightTotal, mainTotal), 1));
}

function byWeight(group: CanaryGroup, random: () => number): CompiledCanary | undefined {
  if (!group.anyWeight) return undefined;
  // One draw in [0, 1): the canaries' ranges first, in creation order (Tengine), main gets the
  // rest; with one canary, P(canary) = weight / total exactly as in ingress-nginx.
  const draw = random();
  let upTo = 0;
  for (const [i, canary] of group.canaries.entries()) {
    upTo += group.shares[i] ?? 0;
    if (draw < upTo) return canary;
  }
  return undefined;
}

/** The canaries of one host/path, compiled once per configuration. */
export interface CanaryGroup {
  /** In creation order. */
  canaries: readonly CompiledCanary[];
  rules: readonly Rule[];
  /** Each canary's share of the requests no rule decides, in [0, 1]. */
  shares: readonly number[];
  anyWeight: boolean;
}

/** `mainWeightTotal`: the main ingress's canary-weight-total, when it sets one. */
export function canaryGroup(
  canaries: readonly CompiledCanary[],
  mainWeightTotal: number | undefined,
): CanaryGroup {
  const shares = sharesOf(canaries, mainWeightTotal);
  return { canaries, rules: orderedRules(canaries), shares, anyWeight: shares.some(s => s > 0) };
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
  const chosen = rule?.canary ?? byWeight(group, context.random);
  if (chosen === undefined) return { target: "main", reason };
  if (!context.available(chosen.id)) {
    return { target: "main", reason: `${reason}: canary ${chosen.id} has no ready endpoint` };
  }
  return { target: "canary", id: chosen.id, reason, actions: chosen.actions };
}
