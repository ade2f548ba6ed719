// gRPC's side of the gateway's own answers. A gRPC client reads the outcome from `grpc-status`,
// never from the HTTP status, so when the gateway itself fails a gRPC call it answers HTTP 200
// with a trailers-only response (one HEADERS frame that ends the stream) carrying the status, as
// Envoy and nginx do; and it bounds the upstream call by the client's `grpc-timeout`.
// Facts: gRPC's PROTOCOL-HTTP2.md (Timeout, Trailers-Only, Status-Message percent-encoding) and
// http-grpc-status-mapping.md (HTTP status → gRPC code for answers without grpc-status).
import type { OutgoingHttpHeaders } from "node:http2";

/** The gRPC status codes the gateway answers with (google.rpc.Code). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

/** Whether a request is a gRPC call: its content type is application/grpc (+proto, +json, …). */
export function isGrpcRequest(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const lower = contentType.toLowerCase();
  return (
    lower === "application/grpc" ||
    lower.startsWith("application/grpc+") ||
    lower.startsWith("application/grpc;")
  );
}

const TIMEOUT_UNITS_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

/**
 * `grpc-timeout` in ms: 1 to 8 ASCII digits and a unit (H, M, S, m, u, n). undefined when absent
 * or malformed — a malformed value is ignored, as grpc-go's server does, rather than failing the
 * call. A positive timeout under 1 ms counts as 1 ms, so it still expires.
 */
export function grpcTimeoutMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (match === null) return undefined;
  const ms = Number(match[1]) * TIMEOUT_UNITS_MS[match[2]!]!;
  return ms === 0 ? 0 : Math.max(1, Math.ceil(ms));
}

/**
 * grpc-message's percent-encoding: bytes outside printable ASCII (0x20–0x7E) and "%" itself are
 * encoded from the UTF-8 bytes, so any message survives HTTP/2 header rules.
 */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The HEADERS of a trailers-only response: HTTP 200, the gRPC content type, status, message. */
export function trailersOnly(code: GrpcCode, message: string): OutgoingHttpHeaders {
  return {
    ":status": 200,
    "content-type": "application/grpc",
    "grpc-status": String(code),
    "grpc-message": encodeGrpcMessage(message),
  };
}

const HTTP_TO_GRPC: ReadonlyMap<number, GrpcCode> = new Map([
  [400, GrpcCode.INTERNAL],
  [401, GrpcCode.UNAUTHENTICATED],
  [403, GrpcCode.PERMISSION_DENIED],
  [404, GrpcCode.UNIMPLEMENTED],
  [413, GrpcCode.RESOURCE_EXHAUSTED],
  [429, GrpcCode.UNAVAILABLE],
  [502, GrpcCode.UNAVAILABLE],
  [503, GrpcCode.UNAVAILABLE],
  [504, GrpcCode.DEADLINE_EXCEEDED],
]);

/**
 * The gRPC code for an answer the gateway would give a plain request: by its decision where that
 * says more than the status (a limit's 503 is RESOURCE_EXHAUSTED), else by gRPC's HTTP-to-gRPC
 * mapping, except that the gateway's 504 is always its own timeout: DEADLINE_EXCEEDED.
 */
export function grpcCodeFor(status: number, decision = ""): GrpcCode {
  if (decision === "rate-limited" || decision === "connection-limited") {
    return GrpcCode.RESOURCE_EXHAUSTED;
  }
  return HTTP_TO_GRPC.get(status) ?? GrpcCode.UNKNOWN;
}
