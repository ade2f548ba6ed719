// ingress-nginx's external authentication (internal/ingress/annotations/authreq, nginx's
// auth_request): before a request is proxied, a request with its headers (never its body) goes to
// `auth-url`; 2xx lets it through with `auth-response-headers` copied onto it, 401 and 403 are the
// client's answer (401 becomes a redirect to `auth-signin`), anything else is 500. This module
// reads and checks the annotations; the gateway's side is gateway/policy/external-auth.ts.
//
// Differences from ingress-nginx, all on the side of refusing: a bad value denies the Ingress
// (ingress-nginx often logs and falls back to a default); the other keys without auth-url deny it
// (ingress-nginx would serve the route open); nginx variables are read only where listed below.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { parseHashBy, type HashPart } from "./load-balancing";
import { annotation, bad, good, parseBool, parseIntIn, quote, type Parsed } from "./validators";
import type { Result } from "../result";

/** ingress-nginx's DefaultCacheDuration: with auth-cache-key and no auth-cache-duration. */
export const DEFAULT_CACHE_DURATION = "200 202 401 5m";
/** ingress-nginx's default auth-signin-redirect-param. */
export const DEFAULT_REDIRECT_PARAM = "rd";
const MAX_RESPONSE_HEADERS = 64;
const MAX_KEEPALIVE = 10_000;
const MAX_URL_LENGTH = 2048;

const fields = {
  url: {
    annotation: "auth-url",
    type: "URL (http or https)",
    default: "",
    doc: "Each request is first asked of this URL (its headers, no body): 2xx lets it through, 401 and 403 are answered to the client, any other status, a connection error or a timeout answers 500. $host (the route's host) may be used.",
  },
  method: {
    annotation: "auth-method",
    type: "HTTP method",
    default: "GET",
    doc: "The method of the request to auth-url (GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS or TRACE); with it, X-Original-URI and X-Scheme are sent too.",
  },
  signin: {
    annotation: "auth-signin",
    type: "URL (http or https)",
    default: "",
    doc: "On a 401 from auth-url, the client is redirected (302) here with the original URL in auth-signin-redirect-param, unless the URL already sets that parameter. $host, $http_host, $scheme, $request_uri and $escaped_request_uri may be used.",
  },
  signinRedirectParam: {
    annotation: "auth-signin-redirect-param",
    type: "query parameter name",
    default: DEFAULT_REDIRECT_PARAM,
    doc: "The query parameter of auth-signin that carries the original URL.",
  },
  responseHeaders: {
    annotation: "auth-response-headers",
    type: "header list",
    default: "",
    doc: "Headers copied from auth-url's 2xx answer onto the request sent upstream (comma-separated); the client's own headers of these names are always removed, so they cannot be forged.",
  },
  requestRedirect: {
    annotation: "auth-request-redirect",
    type: "URL",
    default: "the request URI",
    doc: "The X-Auth-Request-Redirect header sent to auth-url.",
  },
  cacheKey: {
    annotation: "auth-cache-key",
    type: "variables and text",
    default: "",
    doc: "Caches auth-url's answers per gateway worker under this key ($remote_user, $http_authorization, $cookie_<name>, $remote_addr, $host, $request_uri, … and text); answers with Set-Cookie or Cache-Control no-store, no-cache or private are never cached.",
  },
  cacheDuration: {
    annotation: "auth-cache-duration",
    type: "cache rules",
    default: DEFAULT_CACHE_DURATION,
    doc: 'With auth-cache-key: which statuses are cached for how long, nginx proxy_cache_valid rules separated by commas ("200 202 10m, 401 30s"; a time alone caches 200, 301 and 302; "any" every status).',
  },
  alwaysSetCookie: {
    annotation: "auth-always-set-cookie",
    type: "boolean",
    default: "false",
    doc: "Pass auth-url's Set-Cookie to the client on every answer, not only on 200, 201, 204, 206, 301, 302, 303, 304, 307 and 308.",
  },
  keepalive: {
    annotation: "auth-keepalive",
    type: "integer",
    default: "0",
    doc: "Idle connections to auth-url kept open per gateway worker (0: a new connection per request).",
  },
  keepaliveShareVars: {
    annotation: "auth-keepalive-share-vars",
    type: "boolean",
    default: "false",
    doc: "Accepted for compatibility; nginx variables are not shared with anything in Bulwark.",
  },
  keepaliveRequests: {
    annotation: "auth-keepalive-requests",
    type: "integer",
    default: "1000",
    doc: "Accepted and checked (1 or more); Bulwark does not cap the requests per kept connection.",
  },
  keepaliveTimeout: {
    annotation: "auth-keepalive-timeout",
    type: "integer (seconds)",
    default: "60",
    doc: "How long an idle kept connection to auth-url stays open.",
  },
} as const;

type Field = keyof typeof fields;

/** A piece of a URL template: text as written, or a request variable. */
export type UrlPart =
  | { kind: "text"; text: string }
  | { kind: "host" | "http_host" | "scheme" | "request_uri" | "escaped_request_uri" };

type UrlVariable = Exclude<UrlPart, { kind: "text" }>["kind"];

const URL_VARIABLES: Record<string, UrlVariable> = {
  host: "host",
  http_host: "http_host",
  scheme: "scheme",
  pass_access_scheme: "scheme",
  request_uri: "request_uri",
  escaped_request_uri: "escaped_request_uri",
};

/** One status rule of auth-cache-duration: which statuses ("any": all) and for how long. */
export interface CacheRule {
  statuses: readonly number[] | "any";
  seconds: number;
}

const URL_EXPECTED = "an http:// or https:// URL with a host";
// ingress-nginx's URLWithNginxVariableRegex without the space: no "%", "#", "@", brackets or quotes.
const URL_CHARS = /^[-._~a-zA-Z0-9/:,?&=$]+$/;
const VARIABLE = /^\$([A-Za-z0-9_]+)/;

/** "$name" pieces of a URL, each allowed by `allowed`; the rest text. */
function urlParts(raw: string, allowed: ReadonlySet<UrlVariable>): Parsed<UrlPart[]> {
  const parts: UrlPart[] = [];
  let at = 0;
  while (at < raw.length) {
    const dollar = raw.indexOf("$", at);
    const stop = dollar < 0 ? raw.length : dollar;
    if (stop > at) parts.push({ kind: "text", text: raw.slice(at, stop) });
    if (dollar < 0) break;
    const name = VARIABLE.exec(raw.slice(dollar))?.[1];
    const kind = name === undefined ? undefined : URL_VARIABLES[name];
    if (kind === undefined || !allowed.has(kind)) {
      const names = [...allowed].map(v => `$${v}`).join(", ");
      const what = name === undefined ? `a "$" at ${dollar} names no variable` : `$${name}`;
      return bad(URL_EXPECTED, raw, `${what} is not read here; variables allowed: ${names}`);
    }
    parts.push({ kind });
    at = dollar + 1 + name!.length;
  }
  return good(parts);
}

/** The URL with sample values for its variables, to check its shape. */
function sampleUrl(parts: readonly UrlPart[]): string {
  const sample: Record<UrlVariable, string> = {
    host: "h.example",
    http_host: "h.example:8080",
    scheme: "https",
    request_uri: "/p?q=1",
    escaped_request_uri: "%2Fp%3Fq%3D1",
  };
  return parts.map(p => (p.kind === "text" ? p.text : sample[p.kind])).join("");
}

/** Why a URL's shape is wrong (Go's url.Parse checks in ingress-nginx's StringToURL), or undefined. */
function urlShapeProblem(raw: string, parts: readonly UrlPart[]): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `longer than ${MAX_URL_LENGTH} characters`;
  const scheme = /^(https?):\/\//i.exec(raw)?.[1];
  if (scheme === undefined) return "the scheme must be http or https";
  const authority = /^[a-zA-Z]+:\/\/([^/?]*)/.exec(raw)?.[1] ?? "";
  if (authority === "" || authority.startsWith(":")) return "the host is empty";
  if (authority.includes("..")) return "the host has an empty label";
  let url: URL;
  try {
    url = new URL(sampleUrl(parts));
  } catch {
    return "not a URL";
  }
  if (url.hostname === "") return "the host is empty";
  return undefined;
}

function parseUrlTemplate(raw: string, allowed: ReadonlySet<UrlVariable>): Parsed<UrlTemplate> {
  if (!URL_CHARS.test(raw)) {
    return bad(URL_EXPECTED, raw, 'only letters, digits and "-._~/:,?&=$"');
  }
  const parts = urlParts(raw, allowed);
  if (!parts.ok) return parts;
  const problem = urlShapeProblem(raw, parts.value);
  if (problem !== undefined) return bad(URL_EXPECTED, raw, problem);
  return good({ raw, parts: parts.value });
}

export interface UrlTemplate {
  /** As written. */
  raw: string;
  parts: readonly UrlPart[];
}

// auth-url names the server asked, so only the route's own host may be put in it (see the gateway).
const AUTH_URL_VARIABLES: ReadonlySet<UrlVariable> = new Set(["host"]);
const SIGNIN_VARIABLES: ReadonlySet<UrlVariable> = new Set(Object.values(URL_VARIABLES));

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"];

/** auth-method: ingress-nginx's methodsRegex, upper case only. */
export function parseAuthMethod(raw: string): Parsed<string> {
  return METHODS.includes(raw) ? good(raw) : bad(`one of ${METHODS.join(", ")}`, raw);
}

// ingress-nginx's headerRegexp.
const HEADER_NAME = /^[a-zA-Z0-9_-]+$/;

/** auth-response-headers: a comma list of header names; empty entries and spaces around are skipped. */
export function parseResponseHeaders(raw: string): Parsed<string[]> {
  const expected = `header names (letters, digits, "-", "_") separated by commas (at most ${MAX_RESPONSE_HEADERS})`;
  const names = raw
    .split(",")
    .map(name => name.trim())
    .filter(name => name !== "");
  if (names.length > MAX_RESPONSE_HEADERS) return bad(expected, raw, `${names.length} names`);
  const wrong = names.find(name => !HEADER_NAME.test(name));
  if (wrong !== undefined) return bad(expected, raw, `${quote(wrong)} is not a header name`);
  return good(names);
}

// ingress-nginx's URLIsValidRegex (alphanumerics, "-._~/:", ",:?&=").
const REDIRECT_CHARS = /^[-._~a-zA-Z0-9/:,?&=]+$/;

/** auth-request-redirect: sent as a header, so only ingress-nginx's URL characters. */
export function parseRequestRedirect(raw: string): Parsed<string> {
  if (raw.length <= MAX_URL_LENGTH && REDIRECT_CHARS.test(raw)) return good(raw);
  return bad('a URL of letters, digits and "-._~/:,?&="', raw);
}

const PARAM = /^[A-Za-z0-9._~-]+$/;

export function parseRedirectParam(raw: string): Parsed<string> {
  return PARAM.test(raw) ? good(raw) : bad('a query parameter name (letters, digits, "-._~")', raw);
}

const DURATION = /^(\d+)(ms|s|m|h|d|w|M|y)$/;
const STATUS = /^\d{3}$/;
const UNIT_SECONDS: Record<string, number> = {
  ms: 0.001,
  s: 1,
  m: 60,
  h: 3600,
  d: 86_400,
  w: 604_800,
  M: 2_592_000,
  y: 31_536_000,
};
/** nginx proxy_cache_valid with a time alone: 200, 301 and 302. */
const TIME_ONLY_STATUSES = [200, 301, 302];
const CACHE_EXPECTED =
  'proxy_cache_valid rules separated by commas: statuses then a time ("200 202 10m, 401 30s")';
const MAX_CACHE_SECONDS = 31_536_000;

/** One rule: "[status …|any] time [time …]"; undefined when it is not one. */
function cacheRule(text: string): CacheRule | string {
  const words = text.split(" ").filter(word => word !== "");
  const statuses: number[] = [];
  let any = false;
  let seconds = 0;
  let timed = false;
  for (const word of words) {
    const time = DURATION.exec(word);
    if (time !== null) {
      seconds += Number(time[1]) * UNIT_SECONDS[time[2]!]!;
      timed = true;
    } else if (timed) {
      return `${quote(word)} comes after the time`;
    } else if (word === "any") {
      any = true;
    } else if (STATUS.test(word) && Number(word) >= 100 && Number(word) <= 599) {
      statuses.push(Number(word));
    } else {
      return `${quote(word)} is neither a status nor a time (ms, s, m, h, d, w, M, y)`;
    }
  }
  if (!timed) return `${quote(text)} has no time`;
  if (seconds > MAX_CACHE_SECONDS) return `${quote(text)} is longer than a year`;
  const listed = any ? "any" : statuses.length > 0 ? statuses : TIME_ONLY_STATUSES;
  return { statuses: listed, seconds };
}

/** auth-cache-duration: ingress-nginx's ParseStringToCacheDurations, each rule as nginx reads it. */
export function parseCacheDuration(raw: string): Parsed<CacheRule[]> {
  const rules: CacheRule[] = [];
  for (const text of raw.split(",").map(t => t.trim())) {
    if (text === "") continue;
    const rule = cacheRule(text);
    if (typeof rule === "string") return bad(CACHE_EXPECTED, raw, rule);
    rules.push(rule);
  }
  if (rules.length === 0) return bad(CACHE_EXPECTED, raw, "no rule");
  return good(rules);
}

const DEFAULT_CACHE_RULES = (parseCacheDuration(DEFAULT_CACHE_DURATION) as { value: CacheRule[] })
  .value;

const optional = <T>(parse: (raw: string) => Parsed<T>) => annotation(parse).optional();

export const externalAuthSchema = z
  .object({
    url: optional(raw => parseUrlTemplate(raw, AUTH_URL_VARIABLES)),
    method: optional(parseAuthMethod),
    signin: optional(raw => parseUrlTemplate(raw, SIGNIN_VARIABLES)),
    signinRedirectParam: optional(parseRedirectParam),
    responseHeaders: optional(parseResponseHeaders),
    requestRedirect: optional(parseRequestRedirect),
    cacheKey: optional(parseHashBy),
    cacheDuration: optional(parseCacheDuration),
    alwaysSetCookie: optional(parseBool),
    keepalive: optional(raw => parseIntIn(raw, 0, MAX_KEEPALIVE)),
    keepaliveShareVars: optional(parseBool),
    keepaliveRequests: optional(raw => parseIntIn(raw, 1, 1_000_000)),
    keepaliveTimeout: optional(raw => parseIntIn(raw, 1, 86_400, " number of seconds")),
  } satisfies Record<Field, z.ZodType>)
  .superRefine((v, ctx) => {
    if (v.url !== undefined) return;
    ctx.addIssue({
      code: "custom",
      path: ["url"],
      message: `expected an http:// or https:// URL: the other external-auth annotations need "${keyOf({ fields }, "url")}" (without it the route would be served unauthenticated)`,
    });
  })
  .transform(v => ({
    url: v.url!,
    /** The method asked of auth-url; undefined: GET, as nginx's subrequest. */
    method: v.method,
    signin: v.signin,
    redirectParam: v.signinRedirectParam ?? DEFAULT_REDIRECT_PARAM,
    responseHeaders: v.responseHeaders ?? [],
    requestRedirect: v.requestRedirect,
    /** undefined: nothing is cached. */
    cacheKey: v.cacheKey as readonly HashPart[] | undefined,
    cacheRules: v.cacheDuration ?? DEFAULT_CACHE_RULES,
    alwaysSetCookie: v.alwaysSetCookie ?? false,
    keepalive: {
      connections: v.keepalive ?? 0,
      timeoutSeconds: v.keepaliveTimeout ?? 60,
    },
  }));

export type ExternalAuthConfig = z.output<typeof externalAuthSchema>;

export const externalAuthFamily: Family<ExternalAuthConfig, Field> = {
  name: "external-auth",
  fields,
  schema: externalAuthSchema,
  warnings: (value, present) => {
    const out: string[] = [];
    const key = (field: Field) => keyOf(externalAuthFamily, field);
    if (value.cacheKey === undefined && present.has("cacheDuration")) {
      out.push(`annotation "${key("cacheDuration")}" has no effect without "${key("cacheKey")}"`);
    }
    if (value.signin === undefined && present.has("signinRedirectParam")) {
      out.push(
        `annotation "${key("signinRedirectParam")}" has no effect without "${key("signin")}"`,
      );
    }
    return out;
  },
};

export function parseExternalAuth(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<ExternalAuthConfig | undefined> {
  return parseFamily(externalAuthFamily, annotations);
}

/** The cache lifetime of an auth answer's status under the rules, in seconds; 0: not cached. */
export function cacheSeconds(rules: readonly CacheRule[], status: number): number {
  // nginx's ngx_http_file_cache_valid: the first rule, in order, that is "any" or names the status.
  const rule = rules.find(r => r.statuses === "any" || r.statuses.includes(status));
  return rule?.seconds ?? 0;
}
