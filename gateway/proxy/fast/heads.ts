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
  let end = text.indexOf("\r\n");
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
  while (end >= 0) {
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    const colon = line.indexOf(":");
    if (colon <= 0 || !TOKEN_CHAR.test(line.slice(0, colon))) return undefined;
    const name = line.slice(0, colon);
    const role = roleOf(REQUEST_ROLES, name);
    if (role === "keep") {
      head.lines += `${line}\r\n`;
      continue;
    }
    if (!applyHeader(head, role, line.slice(colon + 1).trim())) return undefined;
    if (role === "host" || role === "length") head.lines += `${line}\r\n`;
  }
  if (head.contentLength < 0) head.contentLength = 0;
  return head;
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
  const match = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(statusLine);
  if (match === null) return undefined;
  const http10 = match[1] === "0";
  const status = Number(match[2]);
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

/** The header lines to pass on ("\r\nName: value" each), noting framing facts on the way. */
function responseLines(text: string, firstEnd: number, facts: ResponseFacts): string | undefined {
  let lines = "";
  let end = firstEnd;
  while (end >= 0) {
    const start = end + 2;
    end = text.indexOf("\r\n", start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    const colon = line.indexOf(":");
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    if (!noteResponseHeader(name, line.slice(colon + 1).trim(), facts)) return undefined;
    if (isResponseHop(name)) continue;
    lines += `\r\n${line}`;
  }
  // With Transfer-Encoding, a Content-Length is wrong and must not reach the client (RFC 9112 6.3).
  if (facts.chunked || facts.otherCoding) lines = lines.replace(/\r\ncontent-length:[^\r]*/gi, "");
  return lines;
}
