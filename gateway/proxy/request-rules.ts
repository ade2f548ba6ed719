// The front door's rules for what a request may say (RFC 9112, RFC 9110, RFC 3986), as pure
// functions shared by both request paths: the fast path's own parser (fast/heads.ts) and Node's
// HTTP server (engine.ts). What they accept is what goes upstream, re-serialized; what they refuse
// is answered with the status here and the connection closed.
import { METHODS } from "node:http";
import { isSpaceOrTab, trimWhere } from "../../core/trim";

/** A refused request: the status to answer and a short reason (the metric label). */
export interface Refusal {
  readonly status: number;
  readonly reason: RefusalReason;
}

/** Every reason a request is refused, with the status it is answered. */
const STATUS_OF = {
  "invalid-request-line": 400,
  "unknown-method": 400,
  "unsupported-version": 505,
  "invalid-target": 400,
  "invalid-path": 400,
  "target-too-long": 414,
  "invalid-field": 400,
  "bare-line-feed": 400,
  "invalid-host": 400,
  "missing-host": 400,
  "duplicate-host": 400,
  "invalid-content-length": 400,
  "unsupported-transfer-coding": 501,
  "ambiguous-framing": 400,
  "head-too-large": 431,
  "head-timeout": 408,
  "body-timeout": 408,
  "body-too-large": 413,
  "invalid-chunked-body": 400,
  // A connection without a valid PROXY protocol header is closed, never answered.
  "invalid-proxy-header": 400,
} as const;

export type RefusalReason = keyof typeof STATUS_OF;

const REFUSALS = new Map<RefusalReason, Refusal>(
  Object.entries(STATUS_OF).map(([reason, status]) => [
    reason as RefusalReason,
    { status, reason: reason as RefusalReason },
  ]),
);

/** The one Refusal object per reason (refusals allocate nothing). */
export function refusal(reason: RefusalReason): Refusal {
  return REFUSALS.get(reason)!;
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "reason" in value && "status" in value;
}

/** The front door's limits (settings; nginx's defaults). */
export interface FrontDoorLimits {
  /** The whole request head, from its first byte (nginx client_header_timeout: 60 s → 408). */
  headTimeoutMs: number;
  /** Between two reads of a request body (nginx client_body_timeout: 60 s → 408). */
  bodyTimeoutMs: number;
  /** The request head in bytes, request line included (→ 431). */
  maxHeadBytes: number;
  /** The request target in bytes (nginx: a request line over its 8 KiB buffer → 414). */
  maxTargetBytes: number;
  /** One field line in bytes (ingress-nginx's large-client-header-buffers 4 16k → 431). */
  maxFieldBytes: number;
  /** Forward header names with "_" (nginx underscores_in_headers; off drops them). */
  underscoresInHeaders: boolean;
  /**
   * Proxies whose X-Forwarded-For names the client (BULWARK_TRUSTED_PROXIES: CIDRs in Go's
   * spelling; text, so the settings travel to workers as JSON). Empty: the peer is the client.
   */
  trustedProxies: readonly string[];
  /** Every connection starts with a PROXY protocol header (BULWARK_PROXY_PROTOCOL). */
  proxyProtocol: boolean;
  /** The HTTPS listener offers HTTP/2 by ALPN (BULWARK_HTTP2; absent: on). */
  http2?: boolean;
  /** The HTTP port serves h2c to clients with prior knowledge (BULWARK_HTTP2_CLEARTEXT; absent: off). */
  http2Cleartext?: boolean;
}

export const DEFAULT_FRONT_DOOR: FrontDoorLimits = {
  headTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
  maxHeadBytes: 64 * 1024,
  maxTargetBytes: 8 * 1024,
  maxFieldBytes: 16 * 1024,
  underscoresInHeaders: false,
  trustedProxies: [],
  proxyProtocol: false,
};

/** tchar (RFC 9110 5.6.2) by byte. */
export const IS_TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+.^_`|~-") IS_TCHAR[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) IS_TCHAR[c] = 1;
for (let c = 65; c <= 90; c++) IS_TCHAR[c] = 1;
for (let c = 97; c <= 122; c++) IS_TCHAR[c] = 1;

/** `text` from `start` to `end` (exclusive) is a non-empty token. */
export function isToken(text: string, start = 0, end = text.length): boolean {
  if (end <= start) return false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c > 255 || IS_TCHAR[c] === 0) return false;
  }
  return true;
}

/**
 * The methods Node's parser (llhttp) knows: the standard ones, WebDAV's and a few more. Any other
 * token is refused on both paths alike (llhttp refuses it on Node's path), so no backend built on
 * the same parser is handed a request it cannot read. nginx passes any upper-case token on.
 */
export const KNOWN_METHODS: ReadonlySet<string> = new Set(
  METHODS.filter(method => method !== "CONNECT"),
);

/** A field value's bytes (RFC 9110 5.5): VCHAR, obs-text, SP and HTAB; no other control. */
export function isFieldValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127 || c > 255) return false;
  }
  return true;
}

/**
 * The value of the field line from `start` to `stop` (exclusive), without its OWS; undefined when
 * the line is not a valid field: no colon, a name that is not a token (whitespace before the
 * colon, obs-fold's leading space), or a control character in the value (a bare CR or LF too).
 */
export function fieldValueAt(text: string, start: number, stop: number): string | undefined {
  const colon = text.indexOf(":", start);
  if (colon < 0 || colon >= stop || !isToken(text, start, colon)) return undefined;
  const value = trimOws(text, colon + 1, stop);
  return isFieldValue(value) ? value : undefined;
}

/**
 * The field value without its leading and trailing whitespace (OWS is SP and HTAB only: JS
 * `trim()` would also strip U+00A0 and friends, which latin1 text can hold).
 */
export function trimOws(text: string, start = 0, end = text.length): string {
  return trimWhere(text, isSpaceOrTab, start, end);
}

/** reg-name (DNS-like: letters, digits, "-", ".", "_") or an IPv6 literal, then an optional port. */
const HOST =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** A Host header value (or an absolute-form authority) the gateway can route on. */
export function isValidHost(value: string): boolean {
  return value.length <= 261 && HOST.test(value);
}

/** Content-Length is 1*DIGIT (RFC 9110 8.6): no sign, no list, no whitespace inside. */
export function contentLengthOf(value: string): number {
  const length = value.length;
  if (length === 0 || length > 15) return -1;
  let n = 0;
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * A request's framing, given its Transfer-Encoding (all its lines joined) and whether it has a
 * Content-Length: a length beside a coding is how one request is read as two (RFC 9112 6.1), and
 * HTTP/1.0 has no chunked coding, so both are 400; only a lone "chunked" is served, as nginx
 * does; any other coding is 501 (nginx's answer to an unknown coding).
 */
export function framingRefusal(
  coding: string | undefined,
  hasLength: boolean,
  http10: boolean,
): Refusal | undefined {
  if (coding === undefined) return undefined;
  if (hasLength || http10) return refusal("ambiguous-framing");
  return coding.trim().toLowerCase() === "chunked"
    ? undefined
    : refusal("unsupported-transfer-coding");
}

/** A Host field's value, after `previous` (the one before it, if any): refused, or undefined. */
export function hostRefusal(previous: string | undefined, value: string): Refusal | undefined {
  if (previous !== undefined) return refusal("duplicate-host");
  return isValidHost(value) ? undefined : refusal("invalid-host");
}

/** Header names a Connection header may never remove: the gateway's framing and its own fields. */
export const PROTECTED_FROM_CONNECTION: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-port",
  "x-forwarded-proto",
  "x-real-ip",
]);

// pchar (RFC 3986 3.3) without pct-encoded: unreserved, sub-delims, ":" and "@".
const PATH_BYTE = new Uint8Array(128);
for (const c of "-._~!$&'()*+,;=:@/") PATH_BYTE[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) PATH_BYTE[c] = 1;
for (let c = 65; c <= 90; c++) PATH_BYTE[c] = 1;
for (let c = 97; c <= 122; c++) PATH_BYTE[c] = 1;
/**
 * The query takes any visible ASCII but "#" (clients send raw "|", "{", quotes… in queries, and
 * nginx and llhttp take them); it is forwarded as it came and never routed on.
 */
const isQueryByte = (c: number) => c > 32 && c < 127 && c !== 35;

const UNRESERVED = /[A-Za-z0-9._~-]/;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * The origin-form target as it is routed and sent upstream: the path percent-decoded where the
 * escape stands for an unreserved character (other escapes upper-cased), "//" merged (nginx's
 * merge_slashes), "." and ".." segments removed (RFC 3986 5.2.4); the query unchanged. A path
 * that climbs above "/", carries an encoded "/", "\\" or NUL, a raw "\\" or a byte outside pchar
 * is refused. The common path (nothing to normalize) returns `target` itself.
 */
export function normalizeTarget(target: string): string | Refusal {
  if (target.charCodeAt(0) !== 47 /* / */) return refusal("invalid-target");
  const query = pathEnd(target);
  if (query < 0) return refusal("invalid-path");
  if (!isQuery(target, query + 1)) return refusal("invalid-target");
  const path = target.slice(0, query);
  if (!path.includes("%") && !path.includes("/.") && !path.includes("//")) return target;
  const decoded = decodePath(path);
  const resolved = decoded === undefined ? undefined : removeDotSegments(decoded);
  if (resolved === undefined) return refusal("invalid-path");
  return resolved + target.slice(query);
}

/** Where the path ends (the "?" or the end); -1 for a byte a path may not hold. */
function pathEnd(target: string): number {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 63 /* ? */) return i;
    if (c !== 37 /* % */ && (c >= 128 || PATH_BYTE[c] === 0)) return -1;
  }
  return target.length;
}

function isQuery(target: string, from: number): boolean {
  for (let i = from; i < target.length; i++) if (!isQueryByte(target.charCodeAt(i))) return false;
  return true;
}

/** Decodes escapes of unreserved characters; undefined for a malformed or forbidden escape. */
function decodePath(path: string): string | undefined {
  let out = "";
  let from = 0;
  for (let i = path.indexOf("%"); i >= 0; i = path.indexOf("%", i + 1)) {
    const high = hexValue(path.charCodeAt(i + 1));
    const low = hexValue(path.charCodeAt(i + 2));
    if (high < 0 || low < 0) return undefined;
    const byte = high * 16 + low;
    // Encoded "/", "\" and NUL mean different paths to different backends.
    if (byte === 0x2f || byte === 0x5c || byte === 0) return undefined;
    const char = String.fromCharCode(byte);
    out +=
      path.slice(from, i) + (UNRESERVED.test(char) ? char : path.slice(i, i + 3).toUpperCase());
    from = i + 3;
    i += 2;
  }
  return out + path.slice(from);
}

/** RFC 3986 5.2.4 with "//" merged; undefined when ".." would climb above the root. */
function removeDotSegments(path: string): string | undefined {
  const segments = path.split("/");
  const out: string[] = [];
  // segments[0] is "" (the path starts with "/"); a trailing "." or ".." keeps the slash.
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (segment === ".") {
      if (last) out.push("");
    } else if (segment === "..") {
      if (out.length === 0 || (out.length === 1 && out[0] === "")) return undefined;
      out.pop();
      if (last) out.push("");
    } else if (segment !== "" || last) {
      out.push(segment);
    }
  }
  return `/${out.join("/")}`;
}

/** What a request-target says: the origin-form target to route and send, and an authority. */
export interface ParsedTarget {
  target: string;
  /** An absolute-form target's authority, which replaces Host; undefined for origin-form. */
  authority: string | undefined;
}

/** An origin-form or absolute-form request-target (others, "*" and authority-form, refused). */
export function parseTarget(raw: string): ParsedTarget | Refusal {
  if (raw.charCodeAt(0) !== 47 /* / */) return absoluteTarget(raw);
  const target = normalizeTarget(raw);
  return typeof target === "string" ? { target, authority: undefined } : target;
}

/**
 * An absolute-form target: the request is routed on its authority, Host is ignored, and the
 * origin-form target goes upstream. Userinfo ("user@host") is refused: it is how a URI is made to
 * say one host to one parser and another host to the next.
 */
function absoluteTarget(target: string): ParsedTarget | Refusal {
  const scheme = /^https?:\/\//i.exec(target);
  if (scheme === null) return refusal("invalid-target");
  const start = scheme[0].length;
  let end = start;
  while (end < target.length) {
    const c = target.charCodeAt(end);
    if (c === 47 || c === 63) break;
    end++;
  }
  const authority = target.slice(start, end);
  if (!isValidHost(authority)) return refusal("invalid-host");
  const rest = target.slice(end);
  const origin = rest === "" ? "/" : rest.charCodeAt(0) === 63 ? `/${rest}` : rest;
  const normalized = normalizeTarget(origin);
  if (isRefusal(normalized)) return normalized;
  return { authority, target: normalized };
}
