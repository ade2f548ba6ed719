// Header rewriting between client and upstream, on Node's flat raw-header arrays
// ([name, value, name, value, …]): hop-by-hop headers stay on their own hop (RFC 9110 7.6.1),
// X-Forwarded-* and X-Real-IP describe the client to the upstream. A length check comes before
// any lowercase compare, so ordinary headers cost one switch.

import { roleOf, roleTable } from "./header-roles";
import { PROTECTED_FROM_CONNECTION } from "./request-rules";

/** What the gateway knows about the client connection. */
export interface ClientInfo {
  /** The client's IP address (IPv4-mapped IPv6 unwrapped), sent as X-Real-IP. */
  ip: string;
  /** The TCP peer's, appended to X-Forwarded-For; `ip` unless a trusted proxy forwarded it. */
  peer?: string;
  /** "http" or "https": the listener the request came in on. */
  proto: string;
  /** The listener's port, as text. */
  port: string;
  /** Sent as X-Request-ID (the client's own is replaced by it). */
  requestId: string;
}

export function clientIp(address: string | undefined): string {
  if (address === undefined) return "";
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

/** Request headers that do not go upstream as they came; "xff" is appended to. */
const REQUEST_ROLES = roleTable<"drop" | "xff">({
  te: "drop",
  // Sent first, as the routed authority (an absolute-form target's, when there was one).
  host: "drop",
  trailer: "drop",
  upgrade: "drop",
  "x-real-ip": "drop",
  connection: "drop",
  "keep-alive": "drop",
  "x-forwarded-for": "xff",
  "x-forwarded-host": "drop",
  "x-forwarded-port": "drop",
  "proxy-connection": "drop",
  "x-forwarded-proto": "drop",
  "transfer-encoding": "drop",
  // ingress-nginx: proxy_set_header X-Request-ID $req_id (the client's value, or a new one).
  "x-request-id": "drop",
});

/**
 * Header names a Connection header lists (besides the usual keep-alive/close/upgrade), never the
 * framing fields or the gateway's own: "Connection: Host" must not strip what routes the request.
 */
function connectionListed(raw: readonly string[]): Set<string> | undefined {
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== "connection") continue;
    for (const token of raw[i + 1]!.split(",")) {
      const t = token.trim().toLowerCase();
      if (t === "" || t === "close" || t === "keep-alive" || t === "upgrade") continue;
      if (PROTECTED_FROM_CONNECTION.has(t)) continue;
      (listed ??= new Set()).add(t);
    }
  }
  return listed;
}

/** How the request goes upstream beyond its headers. */
export interface UpstreamFraming {
  /** A WebSocket (or other) upgrade: Connection: upgrade and this Upgrade header are sent. */
  upgrade?: string;
  /** The body is chunked: it is sent chunked too (Node frames a GET's body only when told). */
  chunked?: boolean;
  /** Forward header names with "_" (nginx's underscores_in_headers); dropped otherwise. */
  underscores?: boolean;
}

/**
 * The headers to send upstream: Host (the routed authority) first, then the client's own minus
 * hop-by-hop ones, then the forwarded ones. X-Forwarded-For is appended to, the other forwarded
 * headers replaced.
 */
export function upstreamRequestHeaders(
  raw: readonly string[],
  client: ClientInfo,
  host: string | undefined,
  framing: UpstreamFraming = {},
): string[] {
  const out: string[] = [];
  if (host !== undefined) out.push("Host", host);
  let forwardedFor: string | undefined;
  const listed = connectionListed(raw);
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const role = roleOf(REQUEST_ROLES, name);
    if (role === "xff") {
      const value = raw[i + 1]!;
      forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
    } else if (role !== "drop" && passes(name, framing, listed)) {
      out.push(name, raw[i + 1]!);
    }
  }
  pushForwarded(out, client, host, forwardedFor);
  if (framing.chunked === true) out.push("Transfer-Encoding", "chunked");
  if (framing.upgrade !== undefined) {
    out.push("Connection", "upgrade", "Upgrade", framing.upgrade);
  }
  return out;
}

/** An ordinary header goes upstream unless its name has "_" (when not allowed) or Connection names it. */
function passes(name: string, framing: UpstreamFraming, listed: Set<string> | undefined): boolean {
  if (framing.underscores !== true && name.includes("_")) return false;
  return listed === undefined || !listed.has(name.toLowerCase());
}

/** The forwarded headers: the client's X-Forwarded-For appended to, the others the gateway's own. */
function pushForwarded(
  out: string[],
  client: ClientInfo,
  host: string | undefined,
  forwardedFor: string | undefined,
): void {
  out.push(
    "X-Request-ID",
    client.requestId,
    "X-Forwarded-For",
    forwardedFor === undefined
      ? (client.peer ?? client.ip)
      : `${forwardedFor}, ${client.peer ?? client.ip}`,
    "X-Real-IP",
    client.ip,
    "X-Forwarded-Proto",
    client.proto,
    "X-Forwarded-Host",
    host ?? "",
    "X-Forwarded-Port",
    client.port,
  );
}

function isResponseHopHeader(name: string): boolean {
  switch (name.length) {
    case 7:
      return name.toLowerCase() === "trailer" || name.toLowerCase() === "upgrade";
    case 10: {
      const lower = name.toLowerCase();
      return lower === "connection" || lower === "keep-alive";
    }
    case 16:
      return name.toLowerCase() === "proxy-connection";
    case 17:
      return name.toLowerCase() === "transfer-encoding";
    default:
      return false;
  }
}

/**
 * The upstream's response headers without hop-by-hop ones (Node frames the body itself), and
 * without a 204's Content-Length, as nginx drops it (HTTP/2 clients refuse one, RFC 9110 8.6).
 */
export function downstreamResponseHeaders(raw: readonly string[], status = 200): string[] {
  const listed = connectionListed(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (isResponseHopHeader(name)) continue;
    if (status === 204 && name.length === 14 && name.toLowerCase() === "content-length") continue;
    if (listed !== undefined && listed.has(name.toLowerCase())) continue;
    out.push(name, raw[i + 1]!);
  }
  return out;
}
