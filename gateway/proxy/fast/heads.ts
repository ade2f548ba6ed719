// HTTP/1.1 message heads for the fast path, parsed from latin1 text (byte-exact both ways) by the
// front door's rules (../request-rules.ts). A request head is refused (a status, the connection
// closed), handed to Node's HTTP server (undefined: HTTP/1.0, upgrades, Expect, Connection options
// naming other headers), or parsed: then what goes upstream is re-serialized from what was parsed,
// never copied from the client's lines.

import { roleOf, roleTable } from "../header-roles";
import {
  contentLengthOf,
  DEFAULT_FRONT_DOOR,
  fieldValueAt,
  isFieldValue,
  isRefusal,
  isToken,
  KNOWN_METHODS,
  parseTarget,
  refusal,
  framingRefusal,
  hostRefusal,
  type FrontDoorLimits,
  type Refusal,
} from "../request-rules";

export interface RequestHead {
  method: string;
  /** The origin-form target, normalized: what is routed on and sent upstream. */
  target: string;
  /** The authority routed on: the Host header, or an absolute-form target's authority. */
  host: string;
  /** The body's length; -1 for a chunked body. */
  contentLength: number;
  /** The client asked to close after this exchange. */
  close: boolean;
  /** Header lines to send upstream, each "Name: value\r\n" (forwarded and hop-by-hop ones removed). */
  lines: string;
  /** The client's own X-Forwarded-For values, joined; undefined when none. */
  forwardedFor: string | undefined;
  /** The client's X-Request-ID values, joined (not in `lines`: the gateway sends its own); undefined when none. */
  requestId: string | undefined;
  /** The User-Agent, for the access log (its line stays in `lines`); undefined when none. */
  userAgent: string | undefined;
}

export type Framing = "none" | "length" | "chunked" | "close";

export interface ResponseHead {
  status: number;
  /** Status line and header lines for the client, without the final CRLF. */
  head: string;
  framing: Framing;
  length: number;
  /** The upstream will close (or must not be reused) after this response. */
  upstreamCloses: boolean;
}

type RequestRole =
  | "keep"
  | "drop"
  | "host"
  | "length"
  | "coding"
  | "connection"
  | "xff"
  | "rid"
  | "agent"
  | "fallback";

function lowerIs(name: string, lower: string): boolean {
  return name.length === lower.length && name.toLowerCase() === lower;
}

const REQUEST_ROLES = roleTable<Exclude<RequestRole, "keep">>({
  te: "drop",
  host: "host",
  expect: "fallback",
  upgrade: "fallback",
  trailer: "drop",
  "x-real-ip": "drop",
  connection: "connection",
  "keep-alive": "drop",
  "content-length": "length",
  "x-forwarded-for": "xff",
  "x-forwarded-host": "drop",
  "x-forwarded-port": "drop",
  "proxy-connection": "drop",
  "transfer-encoding": "coding",
  "x-forwarded-proto": "drop",
  "x-request-id": "rid",
  "user-agent": "agent",
});

/** What the header lines said, beyond the lines to send. */
interface HeadFacts {
  /** An absolute-form target's authority: the Host line sent upstream says it instead. */
  readonly authority: string | undefined;
  readonly underscores: boolean;
  readonly maxFieldBytes: number;
  host: string | undefined;
  length: number;
  coding: string | undefined;
  close: boolean;
  /** Something only Node's server serves (an upgrade, Expect, a Connection option). */
  fallback: boolean;
  forwardedFor: string | undefined;
  requestId: string | undefined;
  userAgent: string | undefined;
}

const INVALID_FIELD = refusal("invalid-field");
const FIELD_TOO_LARGE = refusal("head-too-large");

/**
 * A Content-Length line with nothing but spaces around its digits: llhttp refuses whitespace after
 * the digits and nginx a tab before them, so this path refuses both, to agree with each.
 */
function isPlainLength(text: string, start: number, stop: number): boolean {
  if (!isDigit(text.charCodeAt(stop - 1))) return false;
  const tab = text.indexOf("\t", start);
  return tab < 0 || tab >= stop;
}

/** Connection tokens: "close" closes; options other than keep-alive/close need Node's path. */
function noteConnection(value: string, facts: HeadFacts): void {
  for (const token of value.split(",")) {
    const t = token.trim().toLowerCase();
    if (t === "close") facts.close = true;
    else if (t !== "keep-alive" && t !== "") facts.fallback = true;
  }
}

function noteHost(facts: HeadFacts, value: string): Refusal | undefined {
  const refused = hostRefusal(facts.host, value);
  if (refused === undefined) facts.host = value;
  return refused;
}

/** Two lengths, even equal ones, are refused, as nginx and Node's parser refuse them. */
function noteLength(facts: HeadFacts, value: string): Refusal | undefined {
  const length = contentLengthOf(value);
  if (length < 0 || facts.length >= 0) return refusal("invalid-content-length");
  facts.length = length;
  return undefined;
}

const joined = (before: string | undefined, value: string) =>
  before === undefined ? value : `${before}, ${value}`;

/**
 * Applies a special header; returns the line to send upstream for it ("" for none), or a Refusal
 * when its value is not acceptable.
 */
function specialLine(
  facts: HeadFacts,
  role: RequestRole,
  name: string,
  value: string,
): string | Refusal {
  switch (role) {
    case "host":
      return noteHost(facts, value) ?? `Host: ${facts.authority ?? value}\r\n`;
    case "length":
      return noteLength(facts, value) ?? `Content-Length: ${facts.length}\r\n`;
    case "coding":
      facts.coding = joined(facts.coding, value);
      return "";
    case "connection":
      noteConnection(value, facts);
      return "";
    case "xff":
      facts.forwardedFor = joined(facts.forwardedFor, value);
      return "";
    case "rid":
      facts.requestId = joined(facts.requestId, value);
      return "";
    case "agent":
      facts.userAgent = joined(facts.userAgent, value);
      return `${name}: ${value}\r\n`;
    case "fallback":
      facts.fallback = true;
      return "";
    default:
      return "";
  }
}

const HTTP11 = "HTTP/1.1";
const isDigit = (c: number) => c >= 48 && c <= 57;

/** The request line: method, target and version; a Refusal, or "http/1.0" for Node's path. */
function parseRequestLine(
  line: string,
  limits: FrontDoorLimits,
): [string, string] | Refusal | "http/1.0" {
  const space = line.indexOf(" ");
  const last = line.lastIndexOf(" ");
  if (space <= 0 || last === space || !isToken(line, 0, space)) {
    return refusal("invalid-request-line");
  }
  if (!KNOWN_METHODS.has(line.slice(0, space))) return refusal("unknown-method");
  const version = line.slice(last + 1);
  if (version !== HTTP11) {
    if (version === "HTTP/1.0") return "http/1.0";
    return /^HTTP\/[0-9]\.[0-9]$/.test(version)
      ? refusal("unsupported-version")
      : refusal("invalid-request-line");
  }
  if (last - space - 1 > limits.maxTargetBytes) return refusal("target-too-long");
  return [line.slice(0, space), line.slice(space + 1, last)];
}

/** The body's length from the facts (-1: chunked), or a Refusal for framing that is not clear. */
function bodyLength(facts: HeadFacts): number | Refusal {
  if (facts.coding === undefined) return facts.length < 0 ? 0 : facts.length;
  return framingRefusal(facts.coding, facts.length >= 0, false) ?? -1;
}

/**
 * Parses a request head (without the final CRLFCRLF): the head to forward, a Refusal, or
 * undefined when Node's path must serve the request. Every line is checked, whatever it is.
 */
export function parseRequestHead(
  text: string,
  limits: FrontDoorLimits = DEFAULT_FRONT_DOOR,
): RequestHead | Refusal | undefined {
  const end = text.indexOf("\r\n");
  const requestLine = parseRequestLine(end < 0 ? text : text.slice(0, end), limits);
  if (requestLine === "http/1.0") return undefined;
  if (!Array.isArray(requestLine)) return requestLine;
  const target = parseTarget(requestLine[1]);
  if (isRefusal(target)) return target;
  const facts: HeadFacts = {
    authority: target.authority,
    underscores: limits.underscoresInHeaders,
    maxFieldBytes: limits.maxFieldBytes,
    host: undefined,
    length: -1,
    coding: undefined,
    close: false,
    fallback: false,
    forwardedFor: undefined,
    requestId: undefined,
    userAgent: undefined,
  };
  const lines = requestLines(text, end, facts);
  if (typeof lines !== "string") return lines;
  if (facts.host === undefined) return refusal("missing-host");
  const contentLength = bodyLength(facts);
  if (typeof contentLength !== "number") return contentLength;
  if (facts.fallback) return undefined;
  return {
    method: requestLine[0],
    target: target.target,
    host: target.authority ?? facts.host,
    contentLength,
    close: facts.close,
    lines: contentLength < 0 ? `${lines}Transfer-Encoding: chunked\r\n` : lines,
    forwardedFor: facts.forwardedFor,
    requestId: facts.requestId,
    userAgent: facts.userAgent,
  };
}

/**
 * The header lines after the request line (which ends at `end`) to send upstream, each
 * re-serialized as "Name: value\r\n", noting the special ones in `facts`; a Refusal for a line that
 * is not a valid field (no name token, whitespace before the colon, obs-fold, a control character
 * in the value, a bare CR or LF).
 */
function requestLines(text: string, end: number, facts: HeadFacts): string | Refusal {
  let lines = "";
  while (end >= 0) {
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const stop = end < 0 ? text.length : end;
    if (stop - start > facts.maxFieldBytes) return FIELD_TOO_LARGE;
    const value = fieldValueAt(text, start, stop);
    if (value === undefined) return INVALID_FIELD;
    const name = text.slice(start, text.indexOf(":", start));
    const role = roleOf(REQUEST_ROLES, name);
    if (role !== "keep") {
      if (role === "length" && !isPlainLength(text, start, stop)) {
        return refusal("invalid-content-length");
      }
      const line = specialLine(facts, role, name, value);
      if (typeof line !== "string") return line;
      lines += line;
    } else if (facts.underscores || !name.includes("_")) {
      lines += `${name}: ${value}\r\n`;
    }
  }
  return lines;
}

function isResponseHop(name: string): boolean {
  switch (name.length) {
    case 7:
      return lowerIs(name, "upgrade") || lowerIs(name, "trailer");
    case 10:
      return lowerIs(name, "connection") || lowerIs(name, "keep-alive");
    case 16:
      return lowerIs(name, "proxy-connection");
    default:
      return false;
  }
}

interface ResponseFacts {
  length: number;
  chunked: boolean;
  otherCoding: boolean;
  close: boolean;
  keepAlive: boolean;
  /** Header names (lower case) the upstream's Connection lists: hop-by-hop, not for the client. */
  listed: Set<string> | undefined;
}

/** Content-Length, Transfer-Encoding and Connection have these lengths; other names skip noting. */
function mayFrame(name: string): boolean {
  return name.length === 14 || name.length === 17 || name.length === 10;
}

function noteConnectionTokens(value: string, facts: ResponseFacts): void {
  for (const token of value.split(",")) {
    const t = token.trim().toLowerCase();
    if (t === "close") facts.close = true;
    else if (t === "keep-alive") facts.keepAlive = true;
    // The framing fields stay: without them the client could not tell where the body ends.
    else if (t !== "" && t !== "content-length" && t !== "transfer-encoding") {
      (facts.listed ??= new Set()).add(t);
    }
  }
}

function noteResponseHeader(name: string, value: string, facts: ResponseFacts): boolean {
  if (lowerIs(name, "content-length")) {
    const length = contentLengthOf(value);
    if (length < 0 || (facts.length >= 0 && length !== facts.length)) return false;
    facts.length = length;
  } else if (lowerIs(name, "transfer-encoding")) {
    const last = value.split(",").pop()?.trim().toLowerCase();
    facts.chunked = last === "chunked";
    facts.otherCoding = !facts.chunked;
  } else if (lowerIs(name, "connection")) {
    noteConnectionTokens(value, facts);
  }
  return true;
}

function framingOf(status: number, bodyless: boolean, facts: ResponseFacts): Framing {
  if (bodyless || status < 200 || status === 204 || status === 304) return "none";
  if (facts.chunked) return "chunked";
  if (facts.otherCoding) return "close";
  return facts.length >= 0 ? "length" : "close";
}

/**
 * Parses an upstream response head (without the final CRLFCRLF). `bodyless` for answers to HEAD.
 * Undefined for a head that cannot be forwarded safely (the exchange answers 502): an invalid
 * status line or field line, a Content-Length beside a Transfer-Encoding, lengths that disagree,
 * or a 101 nobody asked for.
 */
export function parseResponseHead(text: string, bodyless: boolean): ResponseHead | undefined {
  const firstEnd = text.indexOf("\r\n");
  const statusLine = firstEnd < 0 ? text : text.slice(0, firstEnd);
  const status = statusOf(statusLine);
  if (status < 0 || status === 101) return undefined;
  const http10 = statusLine.charCodeAt(7) === 48; /* 0 */
  const facts: ResponseFacts = {
    length: -1,
    chunked: false,
    otherCoding: false,
    close: false,
    keepAlive: false,
    listed: undefined,
  };
  const lines = responseLines(text, firstEnd, facts);
  if (lines === undefined) return undefined;
  const framing = framingOf(status, bodyless, facts);
  return {
    status,
    head: `HTTP/1.1${statusLine.slice(8)}${lines}`,
    framing,
    length: framing === "length" ? facts.length : 0,
    upstreamCloses: facts.close || (http10 && !facts.keepAlive) || framing === "close",
  };
}

/** The status of "HTTP/1.x NNN[ reason]" (x 0 or 1, no control character in the reason); -1 otherwise. */
function statusOf(line: string): number {
  if (line.length < 12 || !line.startsWith("HTTP/1.")) return -1;
  const minor = line.charCodeAt(7);
  if ((minor !== 48 && minor !== 49) || line.charCodeAt(8) !== 32) return -1;
  const a = line.charCodeAt(9);
  const b = line.charCodeAt(10);
  const c = line.charCodeAt(11);
  if (!isDigit(a) || !isDigit(b) || !isDigit(c)) return -1;
  if (line.length > 12 && (line.charCodeAt(12) !== 32 || !isFieldValue(line.slice(13)))) return -1;
  return (a - 48) * 100 + (b - 48) * 10 + (c - 48);
}

/**
 * The header lines to pass on ("\r\nName: value" each), noting framing facts on the way. Every
 * line is checked as a request's are; valid lines are copied in runs (each with the CRLF before
 * it: `kept` starts the current run), hop-by-hop ones left out.
 */
function responseLines(text: string, firstEnd: number, facts: ResponseFacts): string | undefined {
  let lines = "";
  let kept = firstEnd < 0 ? text.length : firstEnd;
  let end = firstEnd;
  while (end >= 0) {
    const before = end;
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const stop = end < 0 ? text.length : end;
    const value = fieldValueAt(text, start, stop);
    if (value === undefined) return undefined;
    const name = text.slice(start, text.indexOf(":", start));
    if (mayFrame(name) && !noteResponseHeader(name, value, facts)) return undefined;
    if (!isResponseHop(name)) continue;
    lines += text.slice(kept, before);
    kept = stop;
  }
  // Both framings at once is how an upstream desyncs a proxy from its clients (RFC 9112 6.3).
  if ((facts.chunked || facts.otherCoding) && facts.length >= 0) return undefined;
  lines += text.slice(kept);
  return facts.listed === undefined ? lines : withoutListed(lines, facts.listed);
}

/** The lines without the fields a Connection header named ("\r\nName: value" each). */
function withoutListed(lines: string, listed: ReadonlySet<string>): string {
  return lines
    .split("\r\n")
    .filter(line => !listed.has(line.slice(0, line.indexOf(":")).toLowerCase()))
    .join("\r\n");
}
