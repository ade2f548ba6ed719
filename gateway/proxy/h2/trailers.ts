// Trailer fields of an HTTP/1.1 upstream's chunked answer, relayed to an HTTP/2 client that said
// `TE: trailers` as the answer's trailing HEADERS frame. Only fields a trailer may carry pass
// (RFC 9110 6.5.1: nothing that frames, routes, authenticates or controls the answer), never a
// connection-specific one (RFC 9113 8.2.2), in lower case as HTTP/2 wants them.
import { CONNECTION_SPECIFIC, gatherField } from "./request";

/** Fields a sender must not put in a trailer section, or a recipient must not act on there. */
const NOT_IN_TRAILERS: ReadonlySet<string> = new Set([
  // framing and routing
  "content-length",
  "content-encoding",
  "content-type",
  "content-range",
  "host",
  "te",
  "trailer",
  // authentication and state
  "authorization",
  "proxy-authenticate",
  "proxy-authorization",
  "www-authenticate",
  "set-cookie",
  "cookie",
  // response control data
  "age",
  "cache-control",
  "date",
  "expires",
  "location",
  "retry-after",
  "vary",
  "warning",
]);

/**
 * The trailer fields to relay, from Node's raw trailer list ([name, value, …]): names lower-cased,
 * repeated names gathered in order, forbidden, connection-specific and pseudo-header names dropped.
 */
export function relayableTrailers(raw: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === "" || name.startsWith(":")) continue;
    if (CONNECTION_SPECIFIC.has(name) || NOT_IN_TRAILERS.has(name)) continue;
    gatherField(out, name, raw[i + 1]!);
  }
  return out;
}

/** An HTTP/2 request's TE says the client takes trailers (the h2 front door allows no other TE). */
export function acceptsTrailers(te: string | string[] | undefined): boolean {
  return typeof te === "string" && te.trim().toLowerCase() === "trailers";
}
