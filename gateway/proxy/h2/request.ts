// The front door's rules for an HTTP/2 request stream (RFC 9113 8.2-8.3), on the header list as
// Node hands it over (pseudo-headers first). nghttp2 already refuses most malformed lists; these
// checks hold even where it would not, and turn the stream into the same CheckedRequest as an
// HTTP/1.1 request, so routing and policy do not know which protocol asked.
import type { CheckedRequest } from "../node-request";
import {
  contentLengthOf,
  isRefusal,
  isValidHost,
  KNOWN_METHODS,
  parseTarget,
  refusal,
  type FrontDoorLimits,
  type Refusal,
} from "../request-rules";

/** The fields that belong to one HTTP/1.1 connection and are malformed in HTTP/2 (8.2.2). */
export const CONNECTION_SPECIFIC: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

interface Pseudo {
  method: string | undefined;
  scheme: string | undefined;
  path: string | undefined;
  authority: string | undefined;
}

interface Fields {
  host: string | undefined;
  hasLength: boolean;
}

/**
 * The request as the gateway serves it, or why it is refused. `endStream`: the HEADERS frame
 * ended the stream (no body follows); a body without Content-Length goes upstream chunked.
 */
export function checkH2Request(
  raw: readonly string[],
  endStream: boolean,
  limits: Pick<FrontDoorLimits, "maxFieldBytes" | "maxTargetBytes">,
): CheckedRequest | Refusal {
  const pseudo: Pseudo = {
    method: undefined,
    scheme: undefined,
    path: undefined,
    authority: undefined,
  };
  const fields: Fields = { host: undefined, hasLength: false };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (name.length + value.length + 2 > limits.maxFieldBytes) return refusal("head-too-large");
    const refused =
      name.charCodeAt(0) === 58 /* : */
        ? notePseudo(pseudo, name, value)
        : noteField(fields, name, value);
    if (refused !== undefined) return refused;
  }
  return checked(pseudo, fields, endStream, limits.maxTargetBytes);
}

function notePseudo(pseudo: Pseudo, name: string, value: string): Refusal | undefined {
  const key = name.slice(1);
  if (key !== "method" && key !== "scheme" && key !== "path" && key !== "authority") {
    return refusal("invalid-request-line");
  }
  if (pseudo[key] !== undefined) return refusal("invalid-request-line");
  pseudo[key] = value;
  return undefined;
}

function noteField(fields: Fields, name: string, value: string): Refusal | undefined {
  const lower = name.toLowerCase();
  // Field names are lower case in HTTP/2 (8.2.1); connection-specific ones never cross (8.2.2).
  if (lower !== name || CONNECTION_SPECIFIC.has(name)) return refusal("invalid-field");
  if (name === "te" && value.trim().toLowerCase() !== "trailers") return refusal("invalid-field");
  if (name === "host") {
    if (fields.host !== undefined) return refusal("duplicate-host");
    fields.host = value;
  } else if (name === "content-length") {
    if (fields.hasLength || contentLengthOf(value) < 0) return refusal("invalid-content-length");
    fields.hasLength = true;
  }
  return undefined;
}

function checked(
  pseudo: Pseudo,
  fields: Fields,
  endStream: boolean,
  maxTargetBytes: number,
): CheckedRequest | Refusal {
  const { method, scheme, path } = pseudo;
  if (method === undefined || scheme === undefined || path === undefined) {
    return refusal("invalid-request-line");
  }
  // CONNECT (and extended CONNECT) is not offered; an unknown token is refused as on HTTP/1.1.
  if (!KNOWN_METHODS.has(method)) return refusal("unknown-method");
  if (scheme !== "https" && scheme !== "http") return refusal("invalid-request-line");
  const host = authorityOf(pseudo.authority, fields.host);
  if (isRefusal(host)) return host;
  if (path.length > maxTargetBytes) return refusal("target-too-long");
  // Only origin-form here: ":path" never carries an authority (8.3.1).
  if (path.charCodeAt(0) !== 47 /* / */) return refusal("invalid-target");
  const target = parseTarget(path);
  if (isRefusal(target)) return target;
  return { host, target: target.target, chunked: !endStream && !fields.hasLength };
}

/** ":authority", or Host without it; both must then name the same authority (8.3.1). */
function authorityOf(authority: string | undefined, host: string | undefined): string | Refusal {
  const routed = authority ?? host;
  if (routed === undefined || routed === "") return refusal("missing-host");
  if (!isValidHost(routed)) return refusal("invalid-host");
  if (host !== undefined && host.toLowerCase() !== routed.toLowerCase()) {
    return refusal("invalid-host");
  }
  return routed;
}

/**
 * The header list as HTTP/1.1 fields for the upstream: pseudo-headers dropped (the request line
 * and Host carry them), and the cookie crumbs an HTTP/2 client may split (8.2.3) joined into one
 * Cookie field, since an HTTP/1.1 request carries at most one.
 */
export function http1FieldsOf(raw: readonly string[]): string[] {
  const out: string[] = [];
  let cookie: string | undefined;
  let cookieAt = -1;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.charCodeAt(0) === 58 /* : */) continue;
    if (name !== "cookie") {
      out.push(name, raw[i + 1]!);
      continue;
    }
    cookie = cookie === undefined ? raw[i + 1]! : `${cookie}; ${raw[i + 1]!}`;
    if (cookieAt < 0) {
      cookieAt = out.length;
      out.push(name, "");
    }
  }
  if (cookie !== undefined) out[cookieAt + 1] = cookie;
  return out;
}

/** Adds a field to an HTTP/2 header object (its name already lower case): a repeated name gathers its values in order. */
export function gatherField(
  out: Record<string, string | string[] | number | undefined>,
  name: string,
  value: string,
): void {
  const before = out[name];
  if (before === undefined) out[name] = value;
  else out[name] = Array.isArray(before) ? [...before, value] : [String(before), value];
}
