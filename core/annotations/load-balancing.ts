// ingress-nginx's choice of endpoint (annotations loadbalancing and upstreamhashby, balancer.lua):
// `load-balance` picks round_robin (the default) or ewma; `upstream-hash-by` hashes a key made of
// request variables and text onto a consistent-hash ring, and takes precedence over load-balance
// as in balancer.lua's get_implementation; `upstream-hash-by-subset` hashes onto groups of
// `upstream-hash-by-subset-size` endpoints (default 3) and picks one of the group at random.
// ingress-nginx reads any nginx variable; Bulwark reads the ones below and refuses the others.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, parseBool, parseIntIn, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  loadBalance: {
    annotation: "load-balance",
    type: '"round_robin" or "ewma"',
    default: "round_robin",
    doc: 'How an endpoint is chosen: "round_robin" in turn, or "ewma": the one with the lower decaying average response time of two chosen at random (as ingress-nginx\'s ewma.lua, 10 s decay).',
  },
  hashBy: {
    annotation: "upstream-hash-by",
    type: "variables and text",
    default: "",
    doc: 'Consistent hashing: requests with the same key go to the same endpoint while the endpoints do not change ("$request_uri", "$remote_addr", "${http_x_user}-v1"). Variables: $remote_addr, $remote_user, $request_uri, $uri, $args, $host, $scheme, $request_method, $http_<header>, $cookie_<name>, $arg_<name>. Takes precedence over load-balance.',
  },
  subset: {
    annotation: "upstream-hash-by-subset",
    type: "boolean",
    default: "false",
    doc: "Hash onto a group of endpoints instead of one; each request goes to a random endpoint of its group.",
  },
  subsetSize: {
    annotation: "upstream-hash-by-subset-size",
    type: "integer",
    default: "3",
    doc: "The number of endpoints in each group of upstream-hash-by-subset.",
  },
} as const;

type Field = keyof typeof fields;

export type LoadBalance = "round_robin" | "ewma";

/** One piece of a hash key: text as written, or a request variable. */
export type HashPart =
  | { kind: "text"; text: string }
  | {
      kind:
        | "remote_addr"
        | "remote_user"
        | "request_uri"
        | "uri"
        | "args"
        | "host"
        | "scheme"
        | "method";
    }
  | { kind: "header" | "cookie" | "arg"; name: string };

/** ingress-nginx's upstream-hash-by-subset-size default. */
export const DEFAULT_SUBSET_SIZE = 3;
const MAX_SUBSET_SIZE = 1000;

const LB_EXPECTED = '"round_robin" or "ewma"';

/** load-balance, trimmed and case-sensitive as ingress-nginx's ValidateOptions(…, true, true). */
export function parseLoadBalance(raw: string): Parsed<LoadBalance> {
  const word = raw.trim();
  if (word === "round_robin" || word === "ewma") return good(word);
  if (["chash", "chashsubset", "sticky_balanced", "sticky_persistent"].includes(word)) {
    return bad(
      LB_EXPECTED,
      raw,
      `"${word}" is chosen by upstream-hash-by or affinity, not named in load-balance`,
    );
  }
  return bad(LB_EXPECTED, raw);
}

const HASH_EXPECTED = "variables ($remote_addr, $request_uri, $http_<name>…) and text";
// ingress-nginx's hashByRegex: letters, digits, "-", "_", "$", "{" and "}" only.
const HASH_CHARS = /^[A-Za-z0-9\-_${}]+$/;
const VARIABLE = /^[A-Za-z0-9_]+/;
const PLAIN_VARIABLES: Record<string, HashPart> = {
  remote_addr: { kind: "remote_addr" },
  remote_user: { kind: "remote_user" },
  request_uri: { kind: "request_uri" },
  uri: { kind: "uri" },
  document_uri: { kind: "uri" },
  args: { kind: "args" },
  query_string: { kind: "args" },
  host: { kind: "host" },
  scheme: { kind: "scheme" },
  request_method: { kind: "method" },
};
const PREFIXED: readonly [string, "header" | "cookie" | "arg"][] = [
  ["http_", "header"],
  ["cookie_", "cookie"],
  ["arg_", "arg"],
];

/** One variable name as nginx reads it; undefined when Bulwark does not know it. */
export function variablePart(name: string): HashPart | undefined {
  const plain = PLAIN_VARIABLES[name];
  if (plain !== undefined) return plain;
  for (const [prefix, kind] of PREFIXED) {
    if (name.startsWith(prefix) && name.length > prefix.length) {
      const rest = name.slice(prefix.length);
      // nginx's $http_x_user is the header X-User; cookies and arguments keep their names.
      return { kind, name: kind === "header" ? rest.replaceAll("_", "-").toLowerCase() : rest };
    }
  }
  return undefined;
}

/** "$name" or "${name}" at `at` (the "$"): the name and where the variable ends. */
function variableAt(raw: string, at: number): { name: string; end: number } | undefined {
  if (raw[at + 1] === "{") {
    const close = raw.indexOf("}", at + 2);
    const name = close < 0 ? "" : raw.slice(at + 2, close);
    return VARIABLE.exec(name)?.[0] === name && name !== "" ? { name, end: close + 1 } : undefined;
  }
  const name = VARIABLE.exec(raw.slice(at + 1))?.[0];
  return name === undefined ? undefined : { name, end: at + 1 + name.length };
}

/** upstream-hash-by: nginx's complex value, variables and text, as pieces to evaluate per request. */
export function parseHashBy(raw: string): Parsed<readonly HashPart[]> {
  if (!HASH_CHARS.test(raw))
    return bad(HASH_EXPECTED, raw, 'only letters, digits, "-", "_", "$", "{" and "}"');
  const parts: HashPart[] = [];
  let at = 0;
  while (at < raw.length) {
    const dollar = raw.indexOf("$", at);
    const stop = dollar < 0 ? raw.length : dollar;
    if (stop > at) parts.push({ kind: "text", text: raw.slice(at, stop) });
    if (dollar < 0) break;
    const variable = variableAt(raw, dollar);
    if (variable === undefined)
      return bad(HASH_EXPECTED, raw, `a "$" at ${dollar} names no variable`);
    const part = variablePart(variable.name);
    if (part === undefined)
      return bad(HASH_EXPECTED, raw, `$${variable.name} is not a variable Bulwark reads`);
    parts.push(part);
    at = variable.end;
  }
  if (parts.some(part => part.kind === "text" && /[{}]/.test(part.text))) {
    return bad(HASH_EXPECTED, raw, "unbalanced braces");
  }
  return good(parts);
}

export const loadBalancingSchema = z
  .object({
    loadBalance: annotation(parseLoadBalance).optional(),
    hashBy: annotation(parseHashBy).optional(),
    subset: annotation(parseBool).optional(),
    subsetSize: annotation(raw => parseIntIn(raw, 1, MAX_SUBSET_SIZE)).optional(),
  } satisfies Record<Field, z.ZodType>)
  .transform(v => ({
    loadBalance: v.loadBalance ?? ("round_robin" as LoadBalance),
    hashBy: v.hashBy,
    /** The group size when hashing onto groups; undefined hashes onto single endpoints. */
    subsetSize: v.subset === true ? (v.subsetSize ?? DEFAULT_SUBSET_SIZE) : undefined,
  }));

export type LoadBalancingConfig = z.output<typeof loadBalancingSchema>;

export const loadBalancingFamily: Family<LoadBalancingConfig, Field> = {
  name: "load-balancing",
  fields,
  schema: loadBalancingSchema,
  warnings: (value, present) => {
    const warnings: string[] = [];
    const key = (field: Field) => keyOf(loadBalancingFamily, field);
    if (value.hashBy !== undefined && present.has("loadBalance")) {
      warnings.push(
        `annotation "${key("loadBalance")}" is ignored: "${key("hashBy")}" chooses the endpoint`,
      );
    }
    if (value.hashBy === undefined && (present.has("subset") || present.has("subsetSize"))) {
      warnings.push(
        `annotations "${key("subset")}" and "${key("subsetSize")}" are ignored without "${key("hashBy")}"`,
      );
    }
    return warnings;
  },
};

export function parseLoadBalancing(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<LoadBalancingConfig | undefined> {
  return parseFamily(loadBalancingFamily, annotations);
}
