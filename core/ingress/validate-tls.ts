// Certificates against the hosts that use them: each host's certificates must cover it, and a
// host has at most one certificate per key type (the TLS handshake picks ECC or RSA by what the
// client offers; two of one type would shadow each other).
import { certificateCoversHost, type CertificateFacts } from "../tls/certificate";
import { formatErrors, type FieldError, type Result } from "../result";
import type { Ingress } from "./types";

/** What is known of each Secret an Ingress names: its facts, its problems, or nothing (absent). */
export type SecretLookup = (secretName: string) => Result<CertificateFacts> | undefined;

export interface TlsReport {
  errors: FieldError[];
  warnings: string[];
}

export function validateIngressTls(ingress: Ingress, lookup: SecretLookup): TlsReport {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  // host -> key type -> the Secret that provides it
  const byHost = new Map<string, Map<string, string>>();
  for (const [k, tls] of (ingress.spec?.tls ?? []).entries()) {
    const name = tls.secretName;
    if (!name) continue;
    const secret = lookup(name);
    if (secret === undefined) {
      warnings.push(
        `spec.tls[${k}].secretName: Secret ${name} does not exist yet; its hosts get no certificate until it does`,
      );
      continue;
    }
    if (!secret.ok) {
      errors.push({
        field: `spec.tls[${k}].secretName`,
        message: `Secret ${name} cannot be served: ${formatErrors(secret.errors)}`,
      });
      continue;
    }
    for (const [i, host] of (tls.hosts ?? []).entries()) {
      if (!certificateCoversHost(secret.value, host)) {
        const names = secret.value.dnsNames.join(", ") || "no DNS names";
        errors.push({
          field: `spec.tls[${k}].hosts[${i}]`,
          message: `${host} is not covered by Secret ${name}'s certificate (${names})`,
        });
        continue;
      }
      const types = byHost.get(host) ?? new Map<string, string>();
      const other = types.get(secret.value.keyType);
      if (other && other !== name) {
        errors.push({
          field: `spec.tls[${k}]`,
          message: `host ${host} already has an ${secret.value.keyType} certificate from Secret ${other}; at most one ECC and one RSA certificate per host`,
        });
      }
      types.set(secret.value.keyType, other ?? name);
      byHost.set(host, types);
    }
  }
  return { errors, warnings };
}
