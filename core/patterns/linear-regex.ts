// User-supplied regular expressions (canary-by-header-pattern, use-regex paths) run on RE2's
// linear-time engine (re2js, a pure-JavaScript port of RE2/J): matching costs O(pattern × input)
// whatever the pattern, so no request can hold a worker with a pattern like "^(a+)+$". V8's own
// engine backtracks without a limit (ingress-nginx's PCRE at least has a match limit). re2js over
// re2-wasm: no WebAssembly module to load in every worker, the same package in admission and the
// gateway, and its cost (about 1 µs a match, measured) only on routes that use a pattern.
// The syntax is RE2's: what V8 would backtrack on (backreferences, lookaround) is refused at
// admission, naming the construct.
//
// Linear is not cheap: a match costs up to (program size × input length), and every gateway
// worker keeps each compiled program (about 70 bytes an instruction). RE2 lets a pattern compile
// to 1.4 million instructions, and "[a-z]{1000}" is 1 000 of them in 11 characters: a 4 KiB
// header against an 80 000-character pattern took 415 ms per request, and a tenant's 11 KiB
// pattern held 71 MiB in each worker. So a pattern is bounded in characters before it is
// compiled and in instructions after; real ones compile to 20 to 40.
import { RE2JS } from "re2js";

/**
 * The longest pattern compiled; longer ones are refused unread. Finding out that a pattern is over
 * MAX_PATTERN_INSTRUCTIONS takes compiling it: 512 characters of "a{1000}" compile to 73 000
 * instructions (about 90 ms); 1 024, 146 000 (175 ms).
 */
export const MAX_PATTERN_LENGTH = 512;
/** The largest program a pattern may compile to, in RE2 instructions. */
export const MAX_PATTERN_INSTRUCTIONS = 5000;

export interface LinearPattern {
  /** The source as written. */
  readonly source: string;
  /** The size of its program in RE2 instructions: what a match costs per input character, at most. */
  readonly instructions: number;
  /** Whether the pattern matches anywhere in `input` (unanchored, as ngx.re.match and RegExp.test). */
  test(input: string): boolean;
  /** The first match's groups ([0] the whole match, undefined for groups that took no part); null for none. */
  exec(input: string): (string | undefined)[] | null;
}

/**
 * What one request may spend running patterns: the route's path patterns, in order, and its
 * canaries' header patterns, each budget on its own. A match costs at most (program size ×
 * (input length + 1)) steps of the engine, and a hostile pattern makes re2js abandon its DFA and
 * pay them, 26 to 65 ns a step (measured: `(a|b)*a[ab]{1000}c`, 1 008 instructions, 218 ms on
 * 8 KiB; 33 to 59 ms on 900 characters). The bounds alone let one Ingress's regex paths hold a
 * worker 2.5 s a request (ten such paths against an 8 KiB path, every worker, every host's
 * requests behind it); this caps it near 30 ms. Real path patterns compile to 10 to 40
 * instructions: a host with twenty of 20 leaves a path 1 250 characters.
 */
export const MAX_MATCH_STEPS = 500_000;

/** The most matching `input` against `pattern` can cost, in engine steps (see MAX_MATCH_STEPS). */
export function matchSteps(pattern: LinearPattern, input: string): number {
  return pattern.instructions * (input.length + 1);
}

/** A pattern over a bound: valid RE2, but more than the gateway runs. */
export class PatternTooLarge extends Error {}

export interface LinearOptions {
  /** Case-insensitive, as nginx's `~*` locations. */
  ignoreCase?: boolean;
}

/**
 * Compiles `source`; throws with RE2's message when it is not valid RE2 syntax, or naming the bound
 * it exceeds (MAX_PATTERN_LENGTH, MAX_PATTERN_INSTRUCTIONS).
 */
export function compileLinear(source: string, options: LinearOptions = {}): LinearPattern {
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new PatternTooLarge(
      `is ${source.length} characters long, more than the ${MAX_PATTERN_LENGTH} a pattern may have`,
    );
  }
  const compiled = RE2JS.compile(source, options.ignoreCase === true ? RE2JS.CASE_INSENSITIVE : 0);
  const instructions = compiled.programSize();
  if (instructions > MAX_PATTERN_INSTRUCTIONS) {
    throw new PatternTooLarge(
      `compiles to ${instructions} RE2 instructions, more than the ${MAX_PATTERN_INSTRUCTIONS} a pattern may have (each request runs them; spell out fewer repetitions)`,
    );
  }
  return {
    source,
    instructions,
    test: input => compiled.test(input),
    exec: input => {
      const matcher = compiled.matcher(input);
      if (!matcher.find()) return null;
      const groups: (string | undefined)[] = [];
      for (let i = 0; i <= matcher.groupCount(); i++) groups.push(matcher.group(i) ?? undefined);
      return groups;
    },
  };
}

export type PatternCheck =
  | { ok: true; instructions: number; pattern: LinearPattern }
  /** `tooLarge`: valid RE2 over a bound; otherwise not RE2 syntax. */
  | { ok: false; problem: string; tooLarge: boolean };

/** Whether the gateway can run `source`: its program's size, or why not. */
export function checkLinearPattern(source: string, options: LinearOptions = {}): PatternCheck {
  try {
    const pattern = compileLinear(source, options);
    return { ok: true, instructions: pattern.instructions, pattern };
  } catch (error) {
    // Expected failure of user input: it becomes the denial's detail, never a throw.
    const problem = error instanceof Error ? error.message : String(error);
    return { ok: false, problem, tooLarge: error instanceof PatternTooLarge };
  }
}

/** A use-regex path as the gateway runs it: nginx's `location ~* "^<path>"`. */
export function compilePathPattern(path: string): LinearPattern {
  return compileLinear(`^${path}`, PATH_OPTIONS);
}

/** checkLinearPattern of a use-regex path, as compilePathPattern compiles it. */
export function checkPathPattern(path: string): PatternCheck {
  return checkLinearPattern(`^${path}`, PATH_OPTIONS);
}

const PATH_OPTIONS: LinearOptions = { ignoreCase: true };

/**
 * What all regex paths of one Ingress may compile to together, in RE2 instructions: each path is
 * bounded, but thousands fit in one object, and every gateway worker keeps them all.
 */
export const MAX_INGRESS_PATTERN_INSTRUCTIONS = 50_000;

/** A path checked on a PathPatternBudget (`admit`). */
export type BudgetedCheck =
  /** Not compiled: the budget was spent before it. */
  { spent: true } | { spent: false; check: PatternCheck; crossed: boolean };

const SPENT: BudgetedCheck = Object.freeze({ spent: true });

/**
 * One Ingress's regex paths, checked in order and charged to its budget. Once the budget is spent
 * (or a path is over its own bound, which may have cost 90 ms to find out), no more are compiled:
 * that is the time the budget is there to save.
 */
export class PathPatternBudget {
  #left = MAX_INGRESS_PATTERN_INSTRUCTIONS;

  get spent(): boolean {
    return this.#left < 0;
  }

  /**
   * `path` checked on the budget: not compiled once it is spent; otherwise checked and charged,
   * `crossed` when it is the valid path that brought the budget past its end.
   */
  admit(path: string): BudgetedCheck {
    if (this.spent) return SPENT;
    const check = this.check(path);
    return { spent: false, check, crossed: check.ok && this.spent };
  }

  /** `path` checked as compilePathPattern runs it, its instructions charged; call while not spent. */
  check(path: string): PatternCheck {
    const check = checkPathPattern(path);
    if (check.ok) this.#left -= check.instructions;
    // Over the length bound is known before compiling, at no cost: only a compile spends it all.
    else if (check.tooLarge && path.length < MAX_PATTERN_LENGTH) this.#left = -1;
    return check;
  }
}

/** Why `source` is not a pattern the gateway can run; undefined when it is. */
export function linearPatternProblem(
  source: string,
  options: LinearOptions = {},
): string | undefined {
  const check = checkLinearPattern(source, options);
  return check.ok ? undefined : check.problem;
}
