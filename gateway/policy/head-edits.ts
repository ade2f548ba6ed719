// Edits the traffic policy makes to message heads, in the two forms the proxy holds them: the fast
// path's header text ("Name: value\r\n" lines) and Node's flat [name, value, …] arrays. Also the
// gateway's own answers (preflight, robots, redirect) as raw HTTP/1.1 text for the fast path.
import { reasonPhrase } from "../proxy/replies";
import { namedAt } from "./request-values";

export type HeaderPair = readonly [name: string, value: string];

export interface HeaderEdits {
  /** Replace every header of the name (Tengine's "add" actions, the CORS headers). */
  readonly set: readonly HeaderPair[];
  /** Add a line and keep those present (Tengine's "append" actions, Vary). */
  readonly add: readonly HeaderPair[];
}

export const NO_EDITS: HeaderEdits = Object.freeze({ set: [], add: [] });

export function hasEdits(edits: HeaderEdits): boolean {
  return edits.set.length > 0 || edits.add.length > 0;
}

function lowerNames(pairs: readonly HeaderPair[]): Set<string> {
  return new Set(pairs.map(([name]) => name.toLowerCase()));
}

/** "Name: value\r\n" lines with the edits applied; the new lines go last. */
export function editHeaderLines(lines: string, edits: HeaderEdits): string {
  let out = withoutHeaderLines(lines, lowerNames(edits.set));
  for (const [name, value] of [...edits.set, ...edits.add]) out += `${name}: ${value}\r\n`;
  return out;
}

/** Whether the line at `start` (its name ends at `colon`) has a name in `names`, compared in place. */
function namedIn(lines: string, start: number, colon: number, names: ReadonlySet<string>): boolean {
  for (const name of names) {
    if (name.length === colon - start && namedAt(lines, start, name)) return true;
  }
  return false;
}

/**
 * "Name: value\r\n" lines without those whose lower-case name is in `names`. Kept lines are
 * copied in runs, and when none goes the text itself is returned: an upstream rarely sends the
 * headers a policy replaces.
 */
export function withoutHeaderLines(lines: string, names: ReadonlySet<string>): string {
  let out = "";
  let run = 0;
  let start = 0;
  while (start < lines.length) {
    const end = lines.indexOf("\r\n", start);
    const stop = end < 0 ? lines.length : end;
    const colon = lines.indexOf(":", start);
    if (colon >= 0 && colon < stop && namedIn(lines, start, colon, names)) {
      out += lines.slice(run, start);
      run = stop + 2;
    }
    start = stop + 2;
  }
  out = run === 0 ? lines : out + lines.slice(run);
  // Every line ends with CRLF, the last one included.
  return out === "" || out.endsWith("\r\n") ? out : `${out}\r\n`;
}

/** A response head (status line and "\r\n"-separated lines, no final CRLF) with the edits applied. */
export function editResponseHead(head: string, edits: HeaderEdits): string {
  const at = head.indexOf("\r\n");
  const status = at < 0 ? head : head.slice(0, at);
  const lines = at < 0 ? "" : `${head.slice(at + 2)}\r\n`;
  return `${status}\r\n${editHeaderLines(lines, edits).slice(0, -2)}`;
}

/** Node's flat header array with the edits applied (a new array). */
export function editFlatHeaders(flat: readonly string[], edits: HeaderEdits): string[] {
  const replaced = lowerNames(edits.set);
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]!;
    if (!replaced.has(name.toLowerCase())) out.push(name, flat[i + 1]!);
  }
  for (const [name, value] of [...edits.set, ...edits.add]) out.push(name, value);
  return out;
}

/** Node's flat header array without the names in `names` (lower case). */
export function withoutFlatHeaders(flat: readonly string[], names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    if (!names.has(flat[i]!.toLowerCase())) out.push(flat[i]!, flat[i + 1]!);
  }
  return out;
}

/** The target with "name=value" parameters appended (Tengine's canary-request-add-query). */
export function addQuery(target: string, params: readonly HeaderPair[]): string {
  if (params.length === 0) return target;
  // Sent as written: admission allows no space, "&" or "#" in them.
  const query = params.map(([name, value]) => `${name}=${value}`).join("&");
  return `${target}${target.includes("?") ? "&" : "?"}${query}`;
}

/** One of the gateway's own answers: a status, headers and a short body. */
export interface OwnAnswer {
  readonly status: number;
  readonly headers: readonly HeaderPair[];
  readonly body: string;
}

/** The answer's headers with its Content-Length (any given one replaced) and Connection. */
export function ownAnswerHeaders(answer: OwnAnswer, close: boolean): HeaderPair[] {
  const headers = answer.headers.filter(([name]) => name.toLowerCase() !== "content-length");
  headers.push(["Content-Length", String(Buffer.byteLength(answer.body))]);
  if (close) headers.push(["Connection", "close"]);
  return headers;
}

/** The gateway's own answer as HTTP/1.1 text (latin1) for the fast path; no body for HEAD. */
export function ownResponseText(answer: OwnAnswer, close: boolean, bodyless = false): string {
  let head = `HTTP/1.1 ${answer.status} ${reasonPhrase(answer.status)}\r\n`;
  for (const [name, value] of ownAnswerHeaders(answer, close)) head += `${name}: ${value}\r\n`;
  return `${head}\r\n${bodyless ? "" : answer.body}`;
}
