// Admission of an Ingress of Bulwark's class: its annotations (the same parse the gateway uses),
// its spec, and the certificates of the Secrets it names.
import { parseIngressAnnotations } from "../annotations";
import type { FieldError } from "../result";
import type { Ingress } from "./types";
import { validateIngressSpec } from "./validate-spec";
import { validateIngressTls, type SecretLookup } from "./validate-tls";

export interface IngressReview {
  errors: FieldError[];
  warnings: string[];
}

export function reviewIngress(ingress: Ingress, secrets: SecretLookup): IngressReview {
  const annotations = parseIngressAnnotations(ingress.metadata?.annotations);
  const useRegex = annotations.ok ? annotations.value.rewrite?.regexPaths === true : false;
  const spec = validateIngressSpec(ingress, { useRegex });
  const tls = validateIngressTls(ingress, secrets);
  return {
    errors: [...(annotations.ok ? [] : annotations.errors), ...spec.errors, ...tls.errors],
    warnings: [...annotations.warnings, ...spec.warnings, ...tls.warnings],
  };
}
