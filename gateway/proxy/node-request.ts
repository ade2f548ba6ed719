// The front door's rules for requests that Node's HTTP server parsed (HTTP/1.0, upgrades, Expect,
// Connection options, and every later request on a connection handed to it). llhttp already
// refuses what RFC 9112 forbids in the syntax (bare LF, obs-fold, controls, CL with TE); this adds
// what it lets through, so both request paths accept the same requests.
import type { IncomingMessage } from "node:http";
import {
  contentLengthOf,
  isRefusal,
  parseTarget,
  refusal,
  framingRefusal,
  hostRefusal,
  type FrontDoorLimits,
  type Refusal,
} from "./request-rules";

/** What the request is routed on and sends upstream. */
export interface CheckedRequest {
  /** The authority routed on (undefined: an HTTP/1.0 request without Host). */
  host: string | undefined;
  /** The normalized origin-form target. */
  target: string;
  /** The body is chunked (the upstream request must be framed the same way). */
  chunked: boolean;
}

/** The request as the gateway serves it, or why it is refused. */
export function checkNodeRequest(
  req: IncomingMessage,
  limits: FrontDoorLimits,
): CheckedRequest | Refusal {
  if (req.httpVersion !== "1.1" && req.httpVersion !== "1.0") {
    return refusal("unsupported-version");
  }
  const http10 = req.httpVersion === "1.0";
  if (hasLongField(req.rawHeaders, limits.maxFieldBytes)) return refusal("head-too-large");
  const fields = fieldFacts(req.rawHeaders);
  if (isRefusal(fields)) return fields;
  const framing = framingRefusal(fields.coding, fields.length, http10);
  if (framing !== undefined) return framing;
  if (fields.host === undefined && !http10) return refusal("missing-host");
  const url = req.url ?? "";
  if (url.length > limits.maxTargetBytes) return refusal("target-too-long");
  const target = parseTarget(url);
  if (isRefusal(target)) return target;
  return {
    host: target.authority ?? fields.host,
    target: target.target,
    chunked: fields.coding !== undefined,
  };
}

interface FieldFacts {
  host: string | undefined;
  length: boolean;
  coding: string | undefined;
}

/** Over the field line limit: the same 431 as on the fast path (Node limits only the whole head). */
function hasLongField(raw: readonly string[], maxFieldBytes: number): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length + raw[i + 1]!.length + 2 > maxFieldBytes) return true;
  }
  return false;
}

function fieldFacts(raw: readonly string[]): FieldFacts | Refusal {
  const facts: FieldFacts = { host: undefined, length: false, coding: undefined };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    switch (name.length) {
      case 4: {
        if (name.toLowerCase() !== "host") break;
        const refused = hostRefusal(facts.host, value);
        if (refused !== undefined) return refused;
        facts.host = value;
        break;
      }
      case 14:
        if (name.toLowerCase() !== "content-length") break;
        if (contentLengthOf(value) < 0) return refusal("invalid-content-length");
        facts.length = true;
        break;
      case 17:
        if (name.toLowerCase() !== "transfer-encoding") break;
        facts.coding = facts.coding === undefined ? value : `${facts.coding}, ${value}`;
        break;
    }
  }
  return facts;
}
