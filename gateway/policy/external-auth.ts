// External authentication (auth-url) as ingress-nginx renders it for nginx's auth_request
// (nginx.tmpl's `location = /_external-auth-…`): what is asked of the auth server, and what its
// answer means for the request. Pure: the asking itself is auth-request.ts, the cache is
// auth-cache.ts. The request paths call authorize() before anything reaches a backend.
import {
  cacheSeconds,
  type ExternalAuthConfig,
  type UrlPart,
  type UrlTemplate,
} from "../../core/annotations";
import { AuthCache, authCacheable, type CachedAnswer } from "./auth-cache";
import { askAuthServer, type AuthAnswer, type AuthTimeouts } from "./auth-request";
import { hashKey } from "./hash-key";
import { type HeaderEdits, type HeaderPair, type OwnAnswer } from "./head-edits";
import type { RequestFacts } from "./request-values";
import { normalizeHost } from "../routing/table";

export interface AuthOptions {
  /** Connecting to auth-url (BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS). */
  readonly connectTimeoutMs: number;
  /** Waiting for auth-url's answer head once connected (BULWARK_AUTH_READ_TIMEOUT_SECONDS). */
  readonly readTimeoutMs: number;
}

/** The worker's auth answers, shared by its routes (each keyed apart by its auth-url). */
export const SHARED_AUTH_CACHE = new AuthCache();

export const DEFAULT_AUTH_OPTIONS: AuthOptions = { connectTimeoutMs: 5_000, readTimeoutMs: 15_000 };

/** One request as the auth step sees it: the facts, the client's header lines, who asked. */
export interface AuthInput {
  readonly facts: RequestFacts;
  /** The client's headers as sent, in order. */
  readonly headers: readonly HeaderPair[];
  /** The client's address as text (X-Real-IP, X-Forwarded-For to the auth server). */
  readonly clientIp: string;
  readonly requestId: string;
}

export type AuthDecision = "auth-denied" | "auth-signin" | "auth-error";

/** What the auth step decided: answer the client, or let the request through with these edits. */
export type AuthVerdict =
  | { kind: "answer"; answer: OwnAnswer; decision: AuthDecision }
  | {
      kind: "pass";
      /** auth-response-headers from the auth answer, replacing the client's of those names. */
      set: readonly HeaderPair[];
      /** Names (canonicalName) removed from the client's request whether or not the answer had them. */
      remove: ReadonlySet<string>;
      /** The auth answer's Set-Cookie lines, for the client's answer (responseCookies). */
      cookies: readonly string[];
      /** auth-always-set-cookie: the cookies go on every answer. */
      always: boolean;
    };

const TEXT = [["Content-Type", "text/plain; charset=utf-8"] as const];

/** nginx's answer when the auth request fails or answers anything but 2xx, 401 or 403. */
export const AUTH_ERROR_ANSWER: OwnAnswer = Object.freeze({
  status: 500,
  headers: TEXT,
  body: "500 Internal Server Error\n",
});

/** The gateway's own headers on the auth request; the client's lines of these names are dropped. */
const SET_BY_GATEWAY = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "proxy-connection",
  "expect",
  "x-forwarded-proto",
  "x-request-id",
  "x-original-uri",
  "x-scheme",
  "x-original-url",
  "x-original-method",
  "x-sent-from",
  "x-real-ip",
  "x-forwarded-for",
  "x-auth-request-redirect",
]);

/**
 * The route's external auth, compiled once per routing table: auth-url with `$host` resolved to
 * the route's host. A route without an exact host cannot use `$host` there: its client would
 * choose the server that vouches for it, so the route is refused (the string returned).
 */
export function compileExternalAuth(
  config: ExternalAuthConfig,
  route: { readonly host: string; readonly path: string },
  options: AuthOptions,
  cache: AuthCache,
): ExternalAuth | string {
  const routeHost = route.host;
  const usesHost = config.url.parts.some(part => part.kind === "host");
  if (usesHost && (routeHost === "" || routeHost.startsWith("*"))) {
    return `auth-url ${JSON.stringify(config.url.raw)} uses $host on a rule without an exact host`;
  }
  const text = config.url.parts.map(p => (p.kind === "text" ? p.text : routeHost)).join("");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `auth-url ${JSON.stringify(text)} is not a URL`;
  }
  // nginx's cache key starts with the server name and the auth location (one per path).
  const scope = `${routeHost}\u0000${route.path}\u0000${url.href}\u0000${config.method ?? "GET"}\u0000`;
  return new ExternalAuth(config, url, options, { cache, scope });
}

export class ExternalAuth {
  private readonly cache: AuthCache;
  /** Where the cache keeps this route's answers apart from other routes'. */
  private readonly cacheScope: string;

  constructor(
    readonly config: ExternalAuthConfig,
    readonly url: URL,
    readonly options: AuthOptions,
    cache: { cache: AuthCache; scope: string },
  ) {
    this.cache = cache.cache;
    this.cacheScope = cache.scope;
  }

  /** Asks the auth server (or the cache) about one request; never rejects. */
  async authorize(input: AuthInput): Promise<AuthVerdict> {
    const key = this.cacheKey(input.facts);
    const cached = key === undefined ? undefined : this.cache.get(key);
    if (cached !== undefined) return verdictOf(this.config, cached, input.facts);
    const headers = authRequestHeaders(this.config, this.url, input);
    const timeouts: AuthTimeouts = this.options;
    const answer = await askAuthServer(this.url, this.config.method ?? "GET", headers, {
      timeouts,
      keepalive: this.config.keepalive,
    });
    if (answer.kind === "failed") {
      return { kind: "answer", answer: AUTH_ERROR_ANSWER, decision: "auth-error" };
    }
    if (key !== undefined) this.remember(key, answer);
    return verdictOf(this.config, answer, input.facts);
  }

  private cacheKey(facts: RequestFacts): string | undefined {
    const parts = this.config.cacheKey;
    return parts === undefined ? undefined : this.cacheScope + hashKey(parts, facts);
  }

  private remember(key: string, answer: Extract<AuthAnswer, { kind: "answered" }>): void {
    const seconds = cacheSeconds(this.config.cacheRules, answer.status);
    if (seconds <= 0 || !authCacheable(answer.headers)) return;
    this.cache.set(key, answer, seconds * 1000);
  }
}

/**
 * The headers of the auth request (nginx.tmpl's auth location): the client's, without its body
 * framing and without the ones the gateway sets, then X-Original-URL and the rest.
 */
export function authRequestHeaders(
  config: ExternalAuthConfig,
  url: URL,
  input: AuthInput,
): HeaderPair[] {
  const facts = input.facts;
  const out: HeaderPair[] = [];
  for (const pair of input.headers) {
    const lower = pair[0].toLowerCase();
    if (!SET_BY_GATEWAY.has(lower) && !lower.includes("_")) out.push(pair);
  }
  const scheme = facts.https ? "https" : "http";
  out.push(["Host", url.hostname], ["X-Request-ID", input.requestId]);
  if (config.method !== undefined) {
    out.push(["X-Original-URI", facts.target], ["X-Scheme", scheme]);
  }
  out.push(
    ["X-Original-URL", `${scheme}://${facts.host ?? ""}${facts.target}`],
    ["X-Original-Method", facts.method],
    ["X-Sent-From", "nginx-ingress-controller"],
    ["X-Real-IP", input.clientIp],
    ["X-Forwarded-For", input.clientIp],
    ["X-Auth-Request-Redirect", config.requestRedirect ?? facts.target],
  );
  return out;
}

/** What the auth server's answer means (ngx_http_auth_request_handler). */
export function verdictOf(
  config: ExternalAuthConfig,
  answer: CachedAnswer,
  facts: RequestFacts,
): AuthVerdict {
  const { status, headers } = answer;
  const cookies = headerLines(headers["set-cookie"]);
  if (status >= 200 && status < 300) {
    const set: HeaderPair[] = [];
    for (const name of config.responseHeaders) {
      const value = headers[name.toLowerCase()];
      const text = Array.isArray(value) ? value.join(", ") : value;
      if (text !== undefined && text !== "") set.push([name, text]);
    }
    const remove = responseHeaderNames(config);
    return { kind: "pass", set, remove, cookies, always: config.alwaysSetCookie };
  }
  if (status === 401 && config.signin !== undefined) {
    const location = signinLocation(config.signin, config.redirectParam, facts);
    const answer: OwnAnswer = {
      status: 302,
      // The signin location of nginx.tmpl: `add_header Set-Cookie $auth_cookie` (302 qualifies).
      headers: [["Location", location], ...cookies.map(c => ["Set-Cookie", c] as const), ...TEXT],
      body: "",
    };
    return { kind: "answer", answer, decision: "auth-signin" };
  }
  if (status === 401 || status === 403) {
    return {
      kind: "answer",
      answer: deniedAnswer(config, status, headers),
      decision: "auth-denied",
    };
  }
  return { kind: "answer", answer: AUTH_ERROR_ANSWER, decision: "auth-error" };
}

function headerLines(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

const namesCache = new WeakMap<ExternalAuthConfig, ReadonlySet<string>>();

function responseHeaderNames(config: ExternalAuthConfig): ReadonlySet<string> {
  let names = namesCache.get(config);
  if (names === undefined) {
    names = new Set(config.responseHeaders.map(canonicalName));
    namesCache.set(config, names);
  }
  return names;
}

/** 401 carries the auth server's WWW-Authenticate (nginx copies it); Set-Cookie only with always. */
function deniedAnswer(
  config: ExternalAuthConfig,
  status: number,
  headers: CachedAnswer["headers"],
): OwnAnswer {
  const out: HeaderPair[] = [...TEXT];
  if (status === 401) {
    for (const line of headerLines(headers["www-authenticate"])) {
      out.push(["WWW-Authenticate", line]);
    }
  }
  if (config.alwaysSetCookie) {
    for (const cookie of headerLines(headers["set-cookie"])) out.push(["Set-Cookie", cookie]);
  }
  const body = status === 401 ? "401 Unauthorized\n" : "403 Forbidden\n";
  return { status, headers: out, body };
}

/** nginx's `add_header` without `always`: the statuses an added header goes on. */
const ADD_HEADER_STATUSES = new Set([200, 201, 204, 206, 301, 302, 303, 304, 307, 308]);

/**
 * The backend's answer of `status` with the auth answer's Set-Cookie added (nginx.tmpl's
 * `add_header Set-Cookie $auth_cookie`, `always` with auth-always-set-cookie).
 */
export function withAuthCookies(
  edits: HeaderEdits | undefined,
  pass: AuthPass | undefined,
  status: number,
): HeaderEdits | undefined {
  if (pass === undefined || pass.cookies.length === 0) return edits;
  if (!pass.always && !ADD_HEADER_STATUSES.has(status)) return edits;
  const cookies = pass.cookies.map(cookie => ["Set-Cookie", cookie] as const);
  return { set: edits?.set ?? [], add: [...(edits?.add ?? []), ...cookies] };
}

/** "Name: value\r\n" lines as pairs (the fast path's head), for the auth request. */
export function pairsOfLines(lines: string): HeaderPair[] {
  const pairs: HeaderPair[] = [];
  for (const line of lines.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) pairs.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return pairs;
}

/** Node's rawHeaders as pairs, for the auth request. */
export function pairsOfRaw(raw: readonly string[]): HeaderPair[] {
  const pairs: HeaderPair[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/** RFC 3986 unreserved characters stay, every other byte is escaped (set_escape_uri). */
export function escapeUriComponent(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function variableValue(part: Exclude<UrlPart, { kind: "text" }>, facts: RequestFacts): string {
  switch (part.kind) {
    case "host":
      return normalizeHost(facts.host);
    case "http_host":
      return facts.host ?? "";
    case "scheme":
      return facts.https ? "https" : "http";
    case "request_uri":
      return facts.target;
    case "escaped_request_uri":
      return escapeUriComponent(facts.target);
  }
}

function expand(template: UrlTemplate, facts: RequestFacts): string {
  let out = "";
  for (const part of template.parts) {
    out += part.kind === "text" ? part.text : variableValue(part, facts);
  }
  return out;
}

/** Whether a written URL's query already gives `param` a value (Go's url.Query().Get != ""). */
function setsParam(raw: string, param: string): boolean {
  const at = raw.indexOf("?");
  if (at < 0) return false;
  return raw
    .slice(at + 1)
    .split("&")
    .some(pair => pair.startsWith(`${param}=`) && pair.length > param.length + 1);
}

/**
 * Where a 401 sends the client (ingress-nginx's buildAuthSignURL): the signin URL, with
 * `<param>=<scheme>://<Host><escaped request URI>` added unless the URL already sets it.
 */
export function signinLocation(template: UrlTemplate, param: string, facts: RequestFacts): string {
  const url = expand(template, facts);
  if (setsParam(template.raw, param)) return url;
  const scheme = facts.https ? "https" : "http";
  const original = `${scheme}://${facts.host ?? ""}${escapeUriComponent(facts.target)}`;
  return `${url}${url.includes("?") ? "&" : "?"}${param}=${original}`;
}

export type AuthPass = Extract<AuthVerdict, { kind: "pass" }>;

/**
 * A header name as a backend may read it: lower case, "_" as "-" (CGI-style frameworks read
 * X_Auth_Request_User and X-Auth-Request-User as one), so neither spelling can be forged.
 */
function canonicalName(name: string): string {
  return name.toLowerCase().replaceAll("_", "-");
}

/** The fast path's "Name: value\r\n" lines with a passing verdict's headers in place of the client's. */
export function authorizedLines(lines: string, pass: AuthPass): string {
  let out = "";
  for (const line of lines.split("\r\n")) {
    if (line === "") continue;
    if (!pass.remove.has(canonicalName(line.slice(0, line.indexOf(":"))))) out += `${line}\r\n`;
  }
  for (const [name, value] of pass.set) out += `${name}: ${value}\r\n`;
  return out;
}

/** Node's flat header array with a passing verdict's headers in place of the client's. */
export function authorizedFlat(flat: readonly string[], pass: AuthPass): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (!pass.remove.has(canonicalName(flat[i]!))) out.push(flat[i]!, flat[i + 1]!);
  }
  for (const [name, value] of pass.set) out.push(name, value);
  return out;
}
