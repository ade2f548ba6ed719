// upstream-hash-by's key for one request: its variables read from the request facts (nginx's
// values: an absent header, cookie or argument is ""), joined with the text between them.
import type { HashPart } from "../../core/annotations";
import { formatIp } from "../../core/net/ip";
import { normalizeHost } from "../routing/table";
import type { RequestFacts } from "./request-values";

function pathOf(target: string): string {
  const at = target.indexOf("?");
  return at < 0 ? target : target.slice(0, at);
}

function argsOf(target: string): string {
  const at = target.indexOf("?");
  return at < 0 ? "" : target.slice(at + 1);
}

/** nginx's $remote_user: the user name of a Basic Authorization header ("" for anything else). */
export function basicUser(authorization: string | undefined): string {
  const match = /^basic +([A-Za-z0-9+/=]+)$/i.exec(authorization?.trim() ?? "");
  if (match === null) return "";
  const decoded = Buffer.from(match[1]!, "base64").toString("latin1");
  const colon = decoded.indexOf(":");
  return colon < 0 ? "" : decoded.slice(0, colon);
}

type Kind = HashPart["kind"];
type PartOf<K extends Kind> = K extends "header" | "cookie" | "arg"
  ? { kind: K; name: string }
  : Extract<HashPart, { kind: K }>;

/** Each variable's value in one request (nginx's: "" for an absent header, cookie or argument). */
const READERS: { [K in Kind]: (part: PartOf<K>, facts: RequestFacts) => string } = {
  text: part => part.text,
  remote_addr: (_, facts) => (facts.client.length === 0 ? "" : formatIp(facts.client)),
  remote_user: (_, facts) => basicUser(facts.header("authorization")),
  request_uri: (_, facts) => facts.target,
  uri: (_, facts) => pathOf(facts.target),
  args: (_, facts) => argsOf(facts.target),
  host: (_, facts) => normalizeHost(facts.host),
  scheme: (_, facts) => (facts.https ? "https" : "http"),
  method: (_, facts) => facts.method,
  header: (part, facts) => facts.header(part.name) ?? "",
  cookie: (part, facts) => facts.cookie(part.name) ?? "",
  arg: (part, facts) => facts.query(part.name) ?? "",
};

function partValue(part: HashPart, facts: RequestFacts): string {
  return (READERS[part.kind] as (part: HashPart, facts: RequestFacts) => string)(part, facts);
}

/** The request's hash key for upstream-hash-by's parts. */
export function hashKey(parts: readonly HashPart[], facts: RequestFacts): string {
  if (parts.length === 1) return partValue(parts[0]!, facts);
  let key = "";
  for (const part of parts) key += partValue(part, facts);
  return key;
}
