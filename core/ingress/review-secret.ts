// Admission of a kubernetes.io/tls Secret that Bulwark's Ingresses use: the pair must be
// servable, and the change must not break a host of an Ingress that names it.
import { inspectTlsPair } from "../tls/certificate";
import { ok, type FieldError } from "../result";
import type { Ingress } from "./types";
import { validateIngressTls, type SecretLookup } from "./validate-tls";

export interface SecretReview {
  errors: FieldError[];
  warnings: string[];
}

function ingressName(ingress: Ingress): string {
  return `${ingress.metadata?.namespace ?? ""}/${ingress.metadata?.name ?? ""}`;
}

/**
 * Reviews a Secret (decoded PEM data) against the Ingresses that name it. Only
 * problems this Secret introduces are errors: each Ingress is checked as if the Secret were
 * absent, then with it, and the difference is reported against that Ingress.
 */
export function reviewTlsSecret(
  secret: { name: string; certPem: string; keyPem: string },
  now: Date,
  users: Ingress[],
  others: SecretLookup,
): SecretReview {
  const secretName = secret.name;
  const facts = inspectTlsPair(secret.certPem, secret.keyPem, now);
  if (!facts.ok) return { errors: facts.errors, warnings: [] };
  const errors: FieldError[] = [];
  for (const ingress of users) {
    const without = validateIngressTls(ingress, name =>
      name === secretName ? undefined : others(name),
    );
    const known = new Set(without.errors.map(e => `${e.field}\n${e.message}`));
    const withIt = validateIngressTls(ingress, name =>
      name === secretName ? ok(facts.value) : others(name),
    );
    for (const error of withIt.errors) {
      if (!known.has(`${error.field}\n${error.message}`)) {
        errors.push({
          field: 'data["tls.crt"]',
          message: `breaks Ingress ${ingressName(ingress)}: ${error.field}: ${error.message}`,
        });
      }
    }
  }
  return { errors, warnings: [] };
}
