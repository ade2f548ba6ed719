// User-supplied regular expressions (canary-by-header-pattern, use-regex paths) run on RE2's
// linear-time engine (re2js, a pure-JavaScript port of RE2/J): matching costs O(pattern × input)
// whatever the pattern, so no request can hold a worker with a pattern like "^(a+)+$". V8's own
// engine backtracks without a limit (ingress-nginx's PCRE at least has a match limit). re2js over
// re2-wasm: no WebAssembly module to load in every worker, the same package in admission and the
// gateway, and its cost (about 1 µs a match, measured) only on routes that use a pattern.
// The syntax is RE2's: what V8 would backtrack on (backreferences, lookaround) is refused at
// admission, naming the construct.
import { RE2JS } from "re2js";

export interface LinearPattern {
  /** The source as written. */
  readonly source: string;
  /** Whether the pattern matches anywhere in `input` (unanchored, as ngx.re.match and RegExp.test). */
  test(input: string): boolean;
  /** The first match's groups ([0] the whole match, undefined for groups that took no part); null for none. */
  exec(input: string): (string | undefined)[] | null;
}

export interface LinearOptions {
  /** Case-insensitive, as nginx's `~*` locations. */
  ignoreCase?: boolean;
}

/** Compiles `source`; throws with RE2's message when it is not valid RE2 syntax. */
export function compileLinear(source: string, options: LinearOptions = {}): LinearPattern {
  const compiled = RE2JS.compile(source, options.ignoreCase === true ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    source,
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

/** Why `source` is not a pattern the gateway can run; undefined when it is. */
export function linearPatternProblem(
  source: string,
  options: LinearOptions = {},
): string | undefined {
  try {
    compileLinear(source, options);
    return undefined;
  } catch (error) {
    // Expected failure of user input: it becomes the denial's detail, never a throw.
    return error instanceof Error ? error.message : String(error);
  }
}
