// Admission of an Ingress of Bulwark's class: its annotations (the same parse the gateway uses),
// its spec, the certificates of the Secrets it names, and the security controls it asks for that
// Bulwark does not implement. The gateway runs the same review before it serves an Ingress.
import {
  annotationPath,
  basicAuthNamespaceErrors,
  isCanaryIngress,
  parseIngressAnnotations,
} from "../annotations";
import { securityControlProblem, unsupportedSecurityAnnotations } from "../annotations/catalog";
import type { IngressAnnotations } from "../annotations";
import { formatErrors, type FieldError } from "../result";
import { annotationKey } from "../annotations/validators";
import type { Ingress } from "./types";
import { validateIngressSpec } from "./validate-spec";
import { validateIngressTls, type SecretLookup } from "./validate-tls";

/**
 * What an unsupported security annotation does at admission: "deny" (the default), or "warn"
 * while migrating; the gateway refuses to serve such a route either way.
 */
export type SecurityAnnotationMode = "deny" | "warn";

export interface IngressReview {
  errors: FieldError[];
  warnings: string[];
}

// The families a canary does not read: ingress-nginx ignores them on a canary and applies the
// main Ingress's instead (its annotations doc, "Canary").
const INHERITED_FAMILIES = [
  "cors",
  "robots",
  "redirect",
  "proxy",
  "rewrite",
  "upstream",
  "basicAuth",
  "externalAuth",
] as const;

function canaryWarnings(ingress: Ingress, annotations: IngressAnnotations | undefined): string[] {
  if (!isCanaryIngress(ingress.metadata?.annotations) || annotations === undefined) return [];
  const ignored = INHERITED_FAMILIES.filter(family => annotations[family] !== undefined);
  if (ignored.length === 0) return [];
  return [
    `this canary's ${ignored.join(", ")} annotations are ignored: a canary takes its main Ingress's (as in ingress-nginx)`,
  ];
}

/**
 * auth-url's $host is the route's host: on a wildcard or host-less rule (or spec.defaultBackend)
 * the client's Host would choose the server that vouches for it, so that is refused.
 */
function authHostErrors(
  ingress: Ingress,
  annotations: IngressAnnotations | undefined,
): FieldError[] {
  const url = annotations?.externalAuth?.url;
  if (url === undefined || isCanaryIngress(ingress.metadata?.annotations)) return [];
  if (!url.parts.some(part => part.kind === "host")) return [];
  const spec = ingress.spec;
  const loose = (spec?.rules ?? []).some(
    rule => (rule.host ?? "") === "" || rule.host!.startsWith("*"),
  );
  if (!loose && spec?.defaultBackend === undefined) return [];
  const message =
    "expected an auth server's own host: $host stands for the request's host, and a rule of this Ingress has a wildcard host, no host or is spec.defaultBackend, where the client would choose it";
  return [{ field: annotationPath(annotationKey("auth-url")), message }];
}

/** One error per security control Bulwark does not implement, naming its key. */
export function securityErrors(
  annotations: Readonly<Record<string, string>> | undefined,
): FieldError[] {
  return unsupportedSecurityAnnotations(annotations).map(key => ({
    field: annotationPath(key),
    message: securityControlProblem(key),
  }));
}

function securityFindings(ingress: Ingress, mode: SecurityAnnotationMode): IngressReview {
  const annotations = ingress.metadata?.annotations;
  if (mode === "deny") return { errors: securityErrors(annotations), warnings: [] };
  const warnings = unsupportedSecurityAnnotations(annotations).map(
    key =>
      `${key} ${securityControlProblem(key)}: admitted for migration, but the gateway will not serve this Ingress while it is set`,
  );
  return { errors: [], warnings };
}

export function reviewIngress(
  ingress: Ingress,
  secrets: SecretLookup,
  mode: SecurityAnnotationMode = "deny",
): IngressReview {
  const annotations = parseIngressAnnotations(ingress.metadata?.annotations);
  const parsed = annotations.ok ? annotations.value : undefined;
  const spec = validateIngressSpec(ingress, {
    useRegex: parsed?.rewrite?.regexPaths === true,
    rewrites: parsed?.rewrite?.target !== undefined,
  });
  const tls = validateIngressTls(ingress, secrets);
  const security = securityFindings(ingress, mode);
  return {
    errors: [
      ...(annotations.ok ? [] : annotations.errors),
      ...basicAuthNamespaceErrors(parsed?.basicAuth, ingress.metadata?.namespace ?? ""),
      ...security.errors,
      ...authHostErrors(ingress, parsed),
      ...spec.errors,
      ...tls.errors,
    ],
    warnings: [
      ...annotations.warnings,
      ...security.warnings,
      ...canaryWarnings(ingress, parsed),
      ...spec.warnings,
      ...tls.warnings,
    ],
  };
}

/** Why the gateway must not serve an Ingress (undefined: it may), from the admission review. */
export function servingRefusal(ingress: Ingress, secrets: SecretLookup): string | undefined {
  const review = reviewIngress(ingress, secrets, "deny");
  return review.errors.length === 0 ? undefined : formatErrors(review.errors);
}
