// What the traffic policy reads from a request: the method, target, Host, scheme and header,
// cookie and query values. Two views of the same facts: the fast path's header text (only looked
// at when a route has a policy, so a plain route pays nothing) and Node's parsed headers.
import type { IncomingHttpHeaders } from "node:http";
import type { Address } from "../../core/net/ip";
import type { RequestValues } from "./canary";

/** An unknown client (no socket address): in no network, so an allowlist refuses it. */
export const UNKNOWN_CLIENT: Address = new Uint8Array(0);

export interface RequestFacts extends RequestValues {
  readonly method: string;
  /** The request target: path and query, as the client sent it. */
  readonly target: string;
  /** The Host header as sent. */
  readonly host: string | undefined;
  readonly https: boolean;
  /** The client's address (client-address.ts): the peer, or whom trusted proxies name. */
  readonly client: Address;
}

/** Whether the header line at `start` is named `lowerName` (ASCII case ignored), without copying it. */
export function namedAt(lines: string, start: number, lowerName: string): boolean {
  for (let i = 0; i < lowerName.length; i++) {
    let code = lines.charCodeAt(start + i);
    if (code >= 65 && code <= 90) code |= 0x20; // A-Z to a-z
    if (code !== lowerName.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The value of header `lowerName` in "Name: value\r\n" lines (names compared without case;
 * `lowerName` must be lower case); several lines of it are joined with `separator`, as Node's
 * parser and nginx's $http_ variables join them (", ", and "; " for Cookie). Nothing is
 * allocated for the lines it passes over: the canary rules, CORS and affinity each ask.
 */
export function headerInLines(
  lines: string,
  lowerName: string,
  separator = ", ",
): string | undefined {
  let found: string | undefined;
  let start = 0;
  while (start < lines.length) {
    const end = lines.indexOf("\r\n", start);
    const stop = end < 0 ? lines.length : end;
    const colon = start + lowerName.length;
    if (lines.charCodeAt(colon) === 58 /* : */ && namedAt(lines, start, lowerName)) {
      const value = lines.slice(colon + 1, stop).trim();
      found = found === undefined ? value : `${found}${separator}${value}`;
    }
    start = stop + 2;
  }
  return found;
}

/** A cookie's value in a Cookie header ("a=1; b=2"); undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    // A malformed escape is compared as sent, as nginx's $arg_ does.
    return text;
  }
}

/** A query parameter's first value in a request target, percent-decoded; undefined when absent. */
export function queryValue(target: string, name: string): string | undefined {
  const at = target.indexOf("?");
  if (at < 0) return undefined;
  for (const pair of target.slice(at + 1).split("&")) {
    const eq = pair.indexOf("=");
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (decode(key) === name) return eq < 0 ? "" : decode(pair.slice(eq + 1));
  }
  return undefined;
}

/** A parsed request head as the fast path keeps it: header lines as one text. */
export interface HeadText {
  readonly method: string;
  readonly target: string;
  readonly host: string | undefined;
  /** "Name: value\r\n" lines. */
  readonly lines: string;
}

/** The fast path's request: header values are read from the head's text when asked. */
export class HeadLinesFacts implements RequestFacts {
  readonly method: string;
  readonly target: string;
  readonly host: string | undefined;
  private readonly lines: string;
  client: Address = UNKNOWN_CLIENT;

  constructor(
    head: HeadText,
    readonly https: boolean,
  ) {
    this.method = head.method;
    this.target = head.target;
    this.host = head.host;
    this.lines = head.lines;
  }

  header(name: string): string | undefined {
    return headerInLines(this.lines, name);
  }

  cookie(name: string): string | undefined {
    return cookieValue(headerInLines(this.lines, "cookie", "; "), name);
  }

  query(name: string): string | undefined {
    return queryValue(this.target, name);
  }
}

/** Node's parsed request (the engine path). */
export class NodeHeadersFacts implements RequestFacts {
  constructor(
    readonly method: string,
    readonly target: string,
    private readonly headers: IncomingHttpHeaders,
    readonly https: boolean,
  ) {}

  /** The authority routed on (an absolute-form target's); the Host header when not set. */
  routedHost: string | undefined = undefined;
  client: Address = UNKNOWN_CLIENT;

  get host(): string | undefined {
    return this.routedHost ?? this.headers.host;
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  cookie(name: string): string | undefined {
    return cookieValue(this.headers.cookie, name);
  }

  query(name: string): string | undefined {
    return queryValue(this.target, name);
  }
}
