// Tengine-Ingress's source marks: `ingress-referrer` names the application that wrote an Ingress,
// `canary-referrer` the one that wrote a canary. Each is checked against an allow-list (Tengine's
// ConfigMap keys of the same names; Bulwark's BULWARK_INGRESS_REFERRERS / BULWARK_CANARY_REFERRERS):
// an Ingress from elsewhere is neither served nor counted, a canary from elsewhere is not served.
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { annotation, bad, good, hasControlCharacter, type Parsed } from "./validators";
import type { Result } from "../result";

/** Any text without control characters (Tengine reads it as a plain string). */
function parseReferrer(raw: string): Parsed<string> {
  return hasControlCharacter(raw)
    ? bad("an application name without control characters", raw)
    : good(raw);
}

const fields = {
  ingressReferrer: {
    annotation: "ingress-referrer",
    type: "string",
    default: "",
    doc: "The application that wrote this Ingress; when set it must be in BULWARK_INGRESS_REFERRERS, else the Ingress is not served (Tengine).",
  },
  canaryReferrer: {
    annotation: "canary-referrer",
    type: "string",
    default: "",
    doc: "The application that wrote this canary; when set it must be in BULWARK_CANARY_REFERRERS, else the canary is not served (Tengine).",
  },
} as const;

export const referrerSchema = z.object({
  ingressReferrer: annotation(parseReferrer).optional(),
  canaryReferrer: annotation(parseReferrer).optional(),
} satisfies Record<keyof typeof fields, z.ZodType>);

export type ReferrerConfig = z.output<typeof referrerSchema>;

export const referrerFamily: Family<ReferrerConfig, keyof typeof fields> = {
  name: "referrer",
  fields,
  schema: referrerSchema,
};

export function parseReferrers(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<ReferrerConfig | undefined> {
  return parseFamily(referrerFamily, annotations);
}

/**
 * An allow-list setting as Tengine splits its ConfigMap value: on ",", nothing trimmed, so an
 * unset or empty setting allows only Ingresses that name no referrer (its code, not its docs,
 * which say an empty list allows all).
 */
export function referrerAllowList(raw: string | undefined): ReadonlySet<string> {
  return new Set((raw ?? "").split(","));
}

/** Tengine's verifyIngressReferrer / verifyCanaryReferrer: no referrer, or one in the list. */
export function referrerAllowed(
  referrer: string | undefined,
  allowed: ReadonlySet<string>,
): boolean {
  return referrer === undefined || referrer === "" || allowed.has(referrer);
}
