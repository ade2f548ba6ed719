// HTTP/1.1 message heads for the fast path, parsed from latin1 text (byte-exact both ways).
// Anything outside the common case makes the parser return undefined, and the connection goes to
// Node's HTTP server instead (upgrades, Expect, chunked uploads, HTTP/1.0, absolute-form targets,
// obsolete line folding, Connection options naming other headers).

import { roleOf, roleTable } from "../header-roles";

export interface RequestHead {
  method: string;
  target: string;
  host: string | undefined;
  contentLength: number;
  /** The client asked to close after this exchange. */
  close: boolean;
  /** Header lines to send upstream, each ending in CRLF (forwarded and hop-by-hop ones removed). */
  lines: string;
  /** The client's own X-Forwarded-For values, joined; undefined when none. */
  forwardedFor: string | undefined;
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

const TOKEN_CHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const DIGITS = /^[0-9]+$/;

/** tchar (RFC 9110 5.6.2) by char code, for header names checked in place. */
const IS_TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+.^_`|~-") IS_TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0; c < 256; c++) {
  const ch = String.fromCharCode(c);
  if (/[0-9A-Za-z]/.test(ch)) IS_TCHAR[c] = 1;
}

/** `text` from `start` to `end` (exclusive) is a non-empty token. */
function isToken(text: string, start: number, end: number): boolean {
  if (end <= start) return false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c > 255 || IS_TCHAR[c] === 0) return false;
  }
  return true;
}

type RequestRole = "keep" | "drop" | "host" | "length" | "connection" | "xff" | "fallback";

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
  "transfer-encoding": "fallback",
  "x-forwarded-proto": "drop",
});

/** Connection header tokens: "close" closes; options other than keep-alive/close need Node's path. */
function connectionOption(value: string, head: RequestHead): boolean {
  for (const token of value.split(",")) {
    const t = token.trim().toLowerCase();
    if (t === "close") head.close = true;
    else if (t !== "keep-alive" && t !== "") return false;
  }
  return true;
}

/** Special headers that still go upstream as they came. */
function sentOn(role: RequestRole): boolean {
  return role === "host" || role === "length";
}

function applyHeader(head: RequestHead, role: RequestRole, value: string): boolean {
  switch (role) {
    case "host":
      if (head.host !== undefined) return false;
      head.host = value;
      return true;
    case "length":
      if (!DIGITS.test(value) || head.contentLength >= 0) return false;
      head.contentLength = Number(value);
      return Number.isSafeInteger(head.contentLength);
    case "connection":
      return connectionOption(value, head);
    case "xff":
      head.forwardedFor =
        head.forwardedFor === undefined ? value : `${head.forwardedFor}, ${value}`;
      return true;
    default:
      return role !== "fallback";
  }
}

/** The request line: "METHOD /target HTTP/1.1" with an origin-form target. */
function parseRequestLine(line: string): [string, string] | undefined {
  const space = line.indexOf(" ");
  const last = line.lastIndexOf(" ");
  if (space <= 0 || last === space || line.slice(last + 1) !== "HTTP/1.1") return undefined;
  const method = line.slice(0, space);
  const target = line.slice(space + 1, last);
  if (!TOKEN_CHAR.test(method) || target.charCodeAt(0) !== 47 /* / */ || target.includes(" ")) {
    return undefined;
  }
  return [method, target];
}

/** Parses a request head (without the final CRLFCRLF); undefined when Node's path must serve it. */
export function parseRequestHead(text: string): RequestHead | undefined {
  const end = text.indexOf("\r\n");
  const requestLine = parseRequestLine(end < 0 ? text : text.slice(0, end));
  if (requestLine === undefined) return undefined;
  const head: RequestHead = {
    method: requestLine[0],
    target: requestLine[1],
    host: undefined,
    contentLength: -1,
    close: false,
    lines: "",
    forwardedFor: undefined,
  };
  const lines = requestLines(text, end, head);
  if (lines === undefined) return undefined;
  head.lines = lines;
  if (head.contentLength < 0) head.contentLength = 0;
  return head;
}

/**
 * The header lines after the request line (which ends at `end`) to send upstream, each with its
 * CRLF, noting the special ones in `head`; undefined when Node's path must serve the request.
 */
function requestLines(text: string, end: number, head: RequestHead): string | undefined {
  // Kept lines are copied in runs: `kept` is where the current run of kept lines starts.
  let kept = end < 0 ? text.length : end + 2;
  let lines = "";
  while (end >= 0) {
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const stop = end < 0 ? text.length : end;
    const colon = text.indexOf(":", start);
    if (colon < 0 || colon >= stop || !isToken(text, start, colon)) return undefined;
    const role = roleOf(REQUEST_ROLES, text.slice(start, colon));
    if (role === "keep") continue;
    if (!applyHeader(head, role, text.slice(colon + 1, stop).trim())) return undefined;
    if (sentOn(role)) continue;
    // A dropped line ends the run before it.
    lines += text.slice(kept, start);
    kept = end < 0 ? text.length : end + 2;
  }
  if (kept < text.length) lines += `${text.slice(kept)}\r\n`;
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
}

/** Content-Length, Transfer-Encoding and Connection have these lengths; other names skip noting. */
function mayFrame(name: string): boolean {
  return name.length === 14 || name.length === 17 || name.length === 10;
}

function noteResponseHeader(name: string, value: string, facts: ResponseFacts): boolean {
  if (lowerIs(name, "content-length")) {
    if (!DIGITS.test(value) || (facts.length >= 0 && Number(value) !== facts.length)) return false;
    facts.length = Number(value);
  } else if (lowerIs(name, "transfer-encoding")) {
    const last = value.split(",").pop()?.trim().toLowerCase();
    facts.chunked = last === "chunked";
    facts.otherCoding = !facts.chunked;
  } else if (lowerIs(name, "connection")) {
    const lower = value.toLowerCase();
    facts.close ||= lower.includes("close");
    facts.keepAlive ||= lower.includes("keep-alive");
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
 * Undefined for a head that cannot be forwarded safely (the exchange answers 502).
 */
export function parseResponseHead(text: string, bodyless: boolean): ResponseHead | undefined {
  const firstEnd = text.indexOf("\r\n");
  const statusLine = firstEnd < 0 ? text : text.slice(0, firstEnd);
  const status = statusOf(statusLine);
  if (status < 0) return undefined;
  const http10 = statusLine.charCodeAt(7) === 48; /* 0 */
  const facts: ResponseFacts = {
    length: -1,
    chunked: false,
    otherCoding: false,
    close: false,
    keepAlive: false,
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

const isDigit = (c: number) => c >= 48 && c <= 57;

/** The status of "HTTP/1.x NNN[ reason]" (x 0 or 1, no CR or LF in the reason); -1 otherwise. */
function statusOf(line: string): number {
  if (line.length < 12 || !line.startsWith("HTTP/1.")) return -1;
  const minor = line.charCodeAt(7);
  if ((minor !== 48 && minor !== 49) || line.charCodeAt(8) !== 32) return -1;
  const a = line.charCodeAt(9);
  const b = line.charCodeAt(10);
  const c = line.charCodeAt(11);
  if (!isDigit(a) || !isDigit(b) || !isDigit(c)) return -1;
  if (!reasonOk(line)) return -1;
  return (a - 48) * 100 + (b - 48) * 10 + (c - 48);
}

/** Nothing after the status code, or a space and a reason without CR or LF. */
function reasonOk(line: string): boolean {
  if (line.length === 12) return true;
  if (line.charCodeAt(12) !== 32) return false;
  for (let i = 13; i < line.length; i++) {
    const x = line.charCodeAt(i);
    if (x === 10 || x === 13) return false;
  }
  return true;
}

/** The header lines to pass on ("\r\nName: value" each), noting framing facts on the way. */
function responseLines(text: string, firstEnd: number, facts: ResponseFacts): string | undefined {
  // Kept lines are copied in runs, each with the CRLF before it: `kept` starts the current run.
  let lines = "";
  let kept = firstEnd < 0 ? text.length : firstEnd;
  let end = firstEnd;
  while (end >= 0) {
    const before = end;
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const stop = end < 0 ? text.length : end;
    const colon = text.indexOf(":", start);
    if (colon <= start || colon >= stop) return undefined;
    const name = text.slice(start, colon);
    const noted =
      !mayFrame(name) || noteResponseHeader(name, text.slice(colon + 1, stop).trim(), facts);
    if (!noted) return undefined;
    if (!isResponseHop(name)) continue;
    lines += text.slice(kept, before);
    kept = stop;
  }
  lines += text.slice(kept);
  // With Transfer-Encoding, a Content-Length is wrong and must not reach the client (RFC 9112 6.3).
  if (facts.chunked || facts.otherCoding) lines = lines.replace(/\r\ncontent-length:[^\r]*/gi, "");
  return lines;
}
