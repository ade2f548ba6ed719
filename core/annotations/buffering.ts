// ingress-nginx `proxy-buffering` and `client-body-buffer-size` (internal/ingress/annotations/
// proxy, clientbodybuffersize). Bulwark streams requests and responses with backpressure and never
// buffers a body to disk: "off" (ingress-nginx's default) is what it always does. Both are read so
// that bad values are refused as ingress-nginx refuses them; neither changes what Bulwark does.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  proxyBuffering: {
    annotation: "proxy-buffering",
    type: '"on" or "off"',
    default: "off",
    doc: 'Accepted; Bulwark always streams responses, as "off" (ingress-nginx\'s default) does; "on" is accepted with a warning.',
  },
  clientBodyBufferSize: {
    annotation: "client-body-buffer-size",
    type: "size",
    default: "",
    doc: "Accepted and validated as an nginx size (1000, 8k, 1m); Bulwark streams request bodies, so it changes nothing.",
  },
} as const;

/** ingress-nginx's ValidateOptions(["on","off"], case-insensitive, trimmed). */
export function parseOnOff(raw: string): Parsed<"on" | "off"> {
  const word = raw.trim().toLowerCase();
  return word === "on" || word === "off" ? good(word) : bad(`"on" or "off"`, raw);
}

// ingress-nginx's SizeRegex, `^(?i)\d+[bkmg]?$`, once spaces are removed.
const NGINX_SIZE = /^[0-9]+[bkmg]?$/i;

export function parseBufferSize(raw: string): Parsed<string> {
  const size = raw.replaceAll(" ", "");
  return NGINX_SIZE.test(size)
    ? good(size)
    : bad(`an nginx size: digits with an optional b, k, m or g suffix (e.g. "8k")`, raw);
}

export const bufferingSchema = z
  .object({
    proxyBuffering: annotation(parseOnOff).optional(),
    clientBodyBufferSize: annotation(parseBufferSize).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    proxyBuffering: v.proxyBuffering ?? "off",
    clientBodyBufferSize: v.clientBodyBufferSize,
  }));

export type BufferingConfig = z.output<typeof bufferingSchema>;

export const bufferingFamily: Family<BufferingConfig, keyof typeof fields> = {
  name: "buffering",
  fields,
  schema: bufferingSchema,
  warnings: config =>
    config.proxyBuffering === "on"
      ? [
          `${keyOf(bufferingFamily, "proxyBuffering")} "on" has no effect: Bulwark streams responses to the client as they arrive, with backpressure`,
        ]
      : [],
};

export function parseBuffering(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<BufferingConfig | undefined> {
  return parseFamily(bufferingFamily, annotations);
}
