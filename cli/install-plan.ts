// What `bulwark install secrets` does to each Secret, decided from what is there: pure, so every
// case is a unit test. Nothing an operator made is overwritten without being asked: an HMAC key
// stays (a new one would split the zone's daemons until every one re-reads it), and a serving
// certificate is renewed only when asked, close to its expiry, or when it does not name the
// Service the release's pods call.
import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";

/** A certificate this close to its end is renewed by a plain `install secrets` run. */
export const RENEW_WITHIN_DAYS = 30;
const DAY_MS = 86_400_000;

export type Plan =
  | { action: "create"; why: string }
  | { action: "renew"; why: string }
  | { action: "keep"; why: string };

function has(secret: V1Secret, key: string): boolean {
  return Boolean(secret.data?.[key]);
}

function pem(secret: V1Secret, key: string): string {
  return Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
}

/** Its DNS names, from `subjectAltName` ("DNS:a, DNS:b, IP Address:1.2.3.4"). */
function dnsNames(certificate: X509Certificate): Set<string> {
  const entries = (certificate.subjectAltName ?? "").split(",").map(entry => entry.trim());
  return new Set(entries.filter(e => e.startsWith("DNS:")).map(e => e.slice(4)));
}

/**
 * The serving Secret: create it when it is missing or lacks a key the server and the module read;
 * renew it when asked, when its certificate cannot be read, ends within RENEW_WITHIN_DAYS, or
 * lacks one of `requiredDns`; else keep it.
 */
export function servingSecretPlan(
  current: V1Secret | undefined,
  options: { requiredDns: readonly string[]; now: Date; renew: boolean },
): Plan {
  if (!current) return { action: "create", why: "it does not exist" };
  const missing = ["tls.crt", "tls.key", "ca.crt"].filter(key => !has(current, key));
  if (missing.length > 0) return { action: "create", why: `it has no ${missing.join(", ")}` };
  if (options.renew) return { action: "renew", why: "--renew" };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem(current, "tls.crt"));
  } catch {
    return { action: "renew", why: "its tls.crt is not a readable certificate" };
  }
  const ends = new Date(certificate.validTo);
  const until = `valid until ${ends.toISOString()}`;
  if (ends.getTime() - options.now.getTime() < RENEW_WITHIN_DAYS * DAY_MS) {
    return { action: "renew", why: `it is ${until}, within ${RENEW_WITHIN_DAYS} days` };
  }
  const names = dnsNames(certificate);
  const absent = options.requiredDns.filter(name => !names.has(name));
  if (absent.length > 0) return { action: "renew", why: `it does not name ${absent.join(", ")}` };
  return { action: "keep", why: until };
}

/** The HMAC Secret: create it, add the key to a Secret without it (its other keys stay), or keep it. */
export function hmacSecretPlan(
  current: V1Secret | undefined,
  key: string,
): { action: "create" | "add-key" | "keep"; why: string } {
  if (!current) return { action: "create", why: "it does not exist" };
  if (!has(current, key)) return { action: "add-key", why: `it has no ${key}` };
  return { action: "keep", why: `it has ${key}` };
}
