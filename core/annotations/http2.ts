// Bulwark's `bulwark.dev/http2`: whether the HTTPS listener offers HTTP/2 to a host's clients.
// ingress-nginx has no per-host switch (its use-http2 is global), so the key is Bulwark's own.
// The choice is made in the TLS handshake, by ALPN for the client's SNI name: "false" on any
// Ingress of a host offers that host HTTP/1.1 only.
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { annotation, parseBool } from "./validators";
import { BULWARK_INGRESS_ANNOTATION_PREFIX } from "../names";
import type { Result } from "../result";

const fields = {
  http2: {
    annotation: `${BULWARK_INGRESS_ANNOTATION_PREFIX}http2`,
    type: "boolean",
    default: "true",
    doc: 'Offer HTTP/2 (ALPN "h2") to TLS clients of the Ingress\'s hosts; "false" on any Ingress of a host offers that host HTTP/1.1 only (Bulwark; default true, BULWARK_HTTP2 turns it off everywhere). h2c on the HTTP port (BULWARK_HTTP2_CLEARTEXT) is chosen before any host is known, so this does not apply to it.',
    since: "0.2.0",
  },
} as const;

export const http2Schema = z
  .object({ http2: annotation(parseBool).optional() } satisfies Record<
    keyof typeof fields,
    z.ZodType
  >)
  .transform(v => ({ enabled: v.http2 ?? true }));

export type Http2Config = z.output<typeof http2Schema>;

export const http2Family: Family<Http2Config, keyof typeof fields> = {
  name: "http2",
  fields,
  schema: http2Schema,
};

export function parseHttp2(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<Http2Config | undefined> {
  return parseFamily(http2Family, annotations);
}
