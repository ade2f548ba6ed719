// Parsers for the values of canary annotations: names to match on, Tengine value lists "a||b",
// ingress-nginx's header pattern, the mod rule, and Tengine's "dyeing" actions.
import { bad, good, parseList, quote, textProblem, TOKEN, type Parsed } from "./validators";
import { linearPatternProblem } from "../patterns/linear-regex";

/** Tengine's max-canary-{header,cookie,query}-val-num default. */
export const MAX_CANARY_VALUES = 20;
/** Tengine's max-{req,resp}-{add,append}-header-num and max-req-add-query-num default. */
export const MAX_CANARY_ACTIONS = 2;

export const MOD_OPERATORS = ["==", ">", ">=", "<", "<="] as const;
export type ModOperator = (typeof MOD_OPERATORS)[number];

export interface HeaderAction {
  name: string;
  /** Sent as is; Tengine reads a leading "$" as an nginx variable, which the consumer must resolve or refuse. */
  value: string;
}

export interface QueryParam {
  name: string;
  value: string;
}

/** A header or cookie name: an HTTP token. */
export function parseTokenName(raw: string): Parsed<string> {
  return TOKEN.test(raw) ? good(raw) : bad(`a name of letters, digits and !#$%&'*+-.^_\`|~`, raw);
}

const QUERY_NAME = /^[^\s&=#]+$/;

function queryProblem(text: string): string | undefined {
  return textProblem(text) ?? (/[\s&#]/.test(text) ? `has a space, "&" or "#"` : undefined);
}

/** A query parameter name: no space, "&", "=" or "#". */
export function parseQueryName(raw: string): Parsed<string> {
  const ok = QUERY_NAME.test(raw) && textProblem(raw) === undefined;
  return ok ? good(raw) : bad(`a query parameter name without spaces, "&", "=" or "#"`, raw);
}

type ValueKind = "header" | "cookie" | "query";

const VALUE_PROBLEMS: Record<ValueKind, (entry: string) => string | undefined> = {
  header: textProblem,
  // RFC 6265 cookie-octet excludes these; a cookie value holding one can never match.
  cookie: e => textProblem(e) ?? (/[\s",;\\]/.test(e) ? `has a space or one of ",;\\` : undefined),
  query: queryProblem,
};

/** Tengine value list "v1||v2": at most 20 values, none empty. A single value is a list of one. */
export function valueList(kind: ValueKind) {
  return (raw: string): Parsed<string[]> =>
    parseList(raw, {
      expected: `${kind} values separated by "||"`,
      separator: "||",
      max: MAX_CANARY_VALUES,
      entryProblem: VALUE_PROBLEMS[kind],
    });
}

/**
 * ingress-nginx's canary-by-header-pattern is PCRE; here it must compile in RE2 syntax (no flags,
 * unanchored, like ngx.re.match), because the gateway runs it on a linear-time engine
 * (core/patterns/linear-regex.ts). The source is kept, and the consumer compiles it once.
 */
export function parsePattern(raw: string): Parsed<string> {
  const expected = "a regular expression in RE2 syntax (no backreferences or lookaround)";
  if (raw === "") return bad(expected, raw);
  const problem = linearPatternProblem(raw);
  return problem === undefined ? good(raw) : bad(expected, raw, problem);
}

export function parseModOperator(raw: string): Parsed<ModOperator> {
  const operator = MOD_OPERATORS.find(o => o === raw);
  return operator
    ? good(operator)
    : bad(`one of ${MOD_OPERATORS.map(o => quote(o)).join(", ")}`, raw);
}

function splitPair(entry: string, separator: string): [string, string] {
  const at = entry.indexOf(separator);
  return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + separator.length)];
}

function headerActionProblem(entry: string): string | undefined {
  if (!entry.includes(":")) return `has no ":" between name and value`;
  const [name, value] = splitPair(entry, ":");
  if (!TOKEN.test(name)) return `has an invalid header name ${quote(name)}`;
  const problem = textProblem(value.trim());
  return problem === undefined ? undefined : `has a value that ${problem}`;
}

/** Tengine "name:value||name:value", at most 2; the value is trimmed, as HTTP trims it. */
export function parseHeaderActions(raw: string): Parsed<HeaderAction[]> {
  const list = parseList(raw, {
    expected: `"name:value" entries separated by "||"`,
    separator: "||",
    max: MAX_CANARY_ACTIONS,
    entryProblem: headerActionProblem,
  });
  if (!list.ok) return list;
  return good(
    list.value.map(e => splitPair(e, ":")).map(([name, value]) => ({ name, value: value.trim() })),
  );
}

function queryActionProblem(entry: string): string | undefined {
  if (!entry.includes("=")) return `has no "=" between name and value`;
  const [name, value] = splitPair(entry, "=");
  if (!QUERY_NAME.test(name)) return `has an invalid parameter name ${quote(name)}`;
  const problem = queryProblem(value);
  return problem === undefined ? undefined : `has a value that ${problem}`;
}

/** Tengine "name=value&name=value", at most 2. */
export function parseQueryActions(raw: string): Parsed<QueryParam[]> {
  const list = parseList(raw, {
    expected: `"name=value" entries separated by "&"`,
    separator: "&",
    max: MAX_CANARY_ACTIONS,
    entryProblem: queryActionProblem,
  });
  if (!list.ok) return list;
  return good(list.value.map(e => splitPair(e, "=")).map(([name, value]) => ({ name, value })));
}
