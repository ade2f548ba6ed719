// Which Ingresses and TLS Secrets are Bulwark's: one pure decision that admission, the checksum
// (publisher and guard, both modes), the CLI and the gateway all make the same way. Whatever the
// gateway serves is admitted, validated and counted by the checksum, and nothing else is.
import { isOurIngress, namesNoClass } from "./class";
import { referrerAllowed, referrerAllowList } from "../annotations/referrer";
import { annotationKey } from "../annotations/validators";
import { fail, ok, type Result } from "../result";
import type { Ingress, Secret } from "./types";

export const TLS_SECRET_TYPE = "kubernetes.io/tls";

const INGRESS_REFERRER = annotationKey("ingress-referrer");

/** The Ingress's ingress-referrer when the scope's allow-list refuses it; undefined otherwise. */
export function refusedReferrer(ingress: Ingress, scope: ServingScope): string | undefined {
  const referrer = ingress.metadata?.annotations?.[INGRESS_REFERRER];
  return referrerAllowed(referrer, scope.ingressReferrers) ? undefined : referrer;
}

/**
 * The namespaces Pepr's webhook configurations leave out (its namespaceSelector: NotIn), so an
 * Ingress there is never admitted. A test reads the configuration from the API server to check.
 */
export const WEBHOOK_SKIPPED_NAMESPACES: readonly string[] = ["kube-system", "pepr-system"];

export interface ServingScope {
  /** Bulwark's IngressClass is the cluster's default: Ingresses naming no class are Bulwark's too. */
  classIsDefault: boolean;
  /** Namespaces whose Ingresses and Secrets are neither served nor counted. */
  excludedNamespaces: ReadonlySet<string>;
  /**
   * Tengine-Ingress's ingress-referrer allow-list: an Ingress naming a referrer outside it is
   * dropped before anything else looks at it (Tengine's store), checksum included.
   */
  ingressReferrers: ReadonlySet<string>;
}

/** The scope with the class not the default and the webhook-skipped namespaces left out. */
export const DEFAULT_SCOPE: ServingScope = Object.freeze({
  classIsDefault: false,
  excludedNamespaces: new Set(WEBHOOK_SKIPPED_NAMESPACES),
  ingressReferrers: referrerAllowList(undefined),
});

function excluded(object: Ingress | Secret, scope: ServingScope): boolean {
  return scope.excludedNamespaces.has(object.metadata?.namespace ?? "");
}

/**
 * Whether Bulwark serves this Ingress: its class by field or legacy annotation, or no class at all
 * while Bulwark's is the default (Kubernetes fills the class in only at CREATE, so Ingresses from
 * before the class became the default stay unnamed), outside the excluded namespaces, from an
 * allowed referrer.
 */
export function selectsIngress(ingress: Ingress, scope: ServingScope): boolean {
  if (excluded(ingress, scope)) return false;
  if (refusedReferrer(ingress, scope) !== undefined) return false;
  return isOurIngress(ingress) || (scope.classIsDefault && namesNoClass(ingress));
}

/** Whether a Secret is one the checksum counts: every TLS Secret (as Tengine does) in scope. */
export function selectsSecret(secret: Secret, scope: ServingScope): boolean {
  return secret.type === TLS_SECRET_TYPE && !excluded(secret, scope);
}

/** Whether an object is part of the checksummed set. Publisher and guard must agree on this. */
export function countsForChecksum(
  kind: "ingress" | "secret",
  object: Ingress | Secret,
  scope: ServingScope,
): boolean {
  return kind === "ingress"
    ? selectsIngress(object as Ingress, scope)
    : selectsSecret(object as Secret, scope);
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A comma-separated list of namespace names (spaces allowed, empty entries dropped). */
export function parseNamespaceList(raw: string, field: string): Result<Set<string>> {
  const names = raw
    .split(",")
    .map(name => name.trim())
    .filter(name => name !== "");
  const bad = names.find(name => name.length > 63 || !NAMESPACE.test(name));
  if (bad !== undefined) {
    const message = `expected namespace names separated by ",", got ${JSON.stringify(bad)}`;
    return fail([{ field, message }]);
  }
  return ok(new Set(names));
}

/**
 * The excluded namespaces from a setting: a comma-separated list (spaces allowed), "" for none.
 * Unset: the webhook-skipped namespaces, so that nothing is served that admission never saw.
 */
export function parseExcludedNamespaces(raw: string | undefined): Result<Set<string>> {
  if (raw === undefined) return ok(new Set(WEBHOOK_SKIPPED_NAMESPACES));
  return parseNamespaceList(raw, "excludedNamespaces");
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every(item => b.has(item));
}

/** Whether two scopes select the same objects. */
export function sameScope(a: ServingScope, b: ServingScope): boolean {
  return (
    a.classIsDefault === b.classIsDefault &&
    sameSet(a.excludedNamespaces, b.excludedNamespaces) &&
    sameSet(a.ingressReferrers, b.ingressReferrers)
  );
}
