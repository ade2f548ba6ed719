// ingress-nginx `ssl-redirect` and `force-ssl-redirect`. ssl-redirect defaults to true only when the
// ingress has TLS, which this module cannot see: the config says whether it was set at all.
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { annotation, parseBool } from "./validators";
import type { Result } from "../result";

const fields = {
  sslRedirect: {
    annotation: "ssl-redirect",
    type: "boolean",
    default: "true when the host has a certificate",
    doc: 'Redirect HTTP to HTTPS on this Ingress\'s paths when the host has a certificate from any Ingress (default true); "false" opts its own paths out.',
  },
  forceSslRedirect: {
    annotation: "force-ssl-redirect",
    type: "boolean",
    default: "false",
    doc: "Redirect HTTP to HTTPS even when the host has no certificate (default false).",
  },
} as const;

export const redirectSchema = z
  .object({
    sslRedirect: annotation(parseBool).optional(),
    forceSslRedirect: annotation(parseBool).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    /** undefined: not set, so the consumer applies "true when the ingress has TLS". */
    sslRedirect: v.sslRedirect,
    forceSslRedirect: v.forceSslRedirect ?? false,
  }));

export type RedirectConfig = z.output<typeof redirectSchema>;

export const redirectFamily: Family<RedirectConfig, keyof typeof fields> = {
  name: "redirect",
  fields,
  schema: redirectSchema,
};

export function parseRedirect(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RedirectConfig | undefined> {
  return parseFamily(redirectFamily, annotations);
}
