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

/** host -> key type -> the Secret that provides it */
type KeyTypesByHost = Map<string, Map<string, string>>;

function checkEntryHosts(
  entry: { field: string; secretName: string; hosts: string[] },
  facts: CertificateFacts,
  byHost: KeyTypesByHost,
): FieldError[] {
  const { field, secretName, hosts } = entry;
  const errors: FieldError[] = [];
  for (const [i, host] of hosts.entries()) {
    if (!certificateCoversHost(facts, host)) {
      const names = facts.dnsNames.join(", ") || "no DNS names";
      errors.push({
        field: `${field}.hosts[${i}]`,
        message: `${host} is not covered by Secret ${secretName}'s certificate (${names})`,
      });
      continue;
    }
    const types = byHost.get(host) ?? new Map<string, string>();
    const other = types.get(facts.keyType);
    if (other && other !== secretName) {
      errors.push({
        field,
        message: `host ${host} already has an ${facts.keyType} certificate from Secret ${other}; at most one ECC and one RSA certificate per host`,
      });
    }
    types.set(facts.keyType, other ?? secretName);
    byHost.set(host, types);
  }
  return errors;
}

export function validateIngressTls(ingress: Ingress, lookup: SecretLookup): TlsReport {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const byHost: KeyTypesByHost = new Map();
  for (const [k, tls] of (ingress.spec?.tls ?? []).entries()) {
    const name = tls.secretName;
    const secret = name ? lookup(name) : undefined;
    if (!name) continue;
    if (secret === undefined) {
      warnings.push(
        `spec.tls[${k}].secretName: Secret ${name} does not exist yet; its hosts get no certificate until it does`,
      );
    } else if (!secret.ok) {
      errors.push({
        field: `spec.tls[${k}].secretName`,
        message: `Secret ${name} cannot be served: ${formatErrors(secret.errors)}`,
      });
    } else {
      errors.push(
        ...checkEntryHosts(
          { field: `spec.tls[${k}]`, secretName: name, hosts: tls.hosts ?? [] },
          secret.value,
          byHost,
        ),
      );
    }
  }
  return { errors, warnings };
}
