// Every annotation Bulwark knows under the nginx.ingress.kubernetes.io/ prefix: its family, the
// kinds of object it is read on, and a one-line doc. Built from the families' own field tables, so
// adding an annotation to a family adds it here; docs can be generated from this list.
import { canaryFamily } from "./canary";
import { corsFamily } from "./cors";
import { annotationKey } from "./validators";
import type { AnnotationField, Family } from "./family";
import { proxyFamily } from "./proxy";
import { redirectFamily } from "./redirect";
import { rewriteFamily } from "./rewrite";
import { robotsFamily } from "./robots";
import { ingressRolloutFamily, secretRolloutFamily } from "./rollout";
import { versionFamily } from "./version";
import { referrerFamily } from "./referrer";
import { sourceRangeFamily } from "./source-range";
import { rateLimitFamily } from "./rate-limit";
import { upstreamFamily } from "./upstream";
import { urlRedirectFamily } from "./url-redirect";
import { hostNamesFamily } from "./host-names";
import { errorPagesFamily } from "./error-pages";
import { bufferingFamily } from "./buffering";
import { loadBalancingFamily } from "./load-balancing";
import { affinityFamily } from "./affinity";
import { basicAuthFamily } from "./basic-auth";
import { externalAuthFamily } from "./external-auth";
import { http2Family } from "./http2";

export type AnnotatedKind = "Ingress" | "Secret";

const PLURAL: Record<AnnotatedKind, string> = { Ingress: "Ingresses", Secret: "Secrets" };

export interface AnnotationInfo {
  /** The full key, e.g. "nginx.ingress.kubernetes.io/canary-weight". */
  key: string;
  family: Family<unknown>["name"];
  kinds: AnnotatedKind[];
  doc: string;
  field: AnnotationField;
}

type FamilyTable = Pick<Family<unknown>, "name" | "fields">;

export const INGRESS_FAMILIES: readonly FamilyTable[] = [
  canaryFamily,
  corsFamily,
  robotsFamily,
  redirectFamily,
  proxyFamily,
  rewriteFamily,
  ingressRolloutFamily,
  versionFamily,
  referrerFamily,
  sourceRangeFamily,
  rateLimitFamily,
  upstreamFamily,
  urlRedirectFamily,
  hostNamesFamily,
  errorPagesFamily,
  bufferingFamily,
  loadBalancingFamily,
  affinityFamily,
  basicAuthFamily,
  externalAuthFamily,
  http2Family,
];

export const SECRET_FAMILIES: readonly FamilyTable[] = [secretRolloutFamily, versionFamily];

function buildRegistry(): Map<string, AnnotationInfo> {
  const registry = new Map<string, AnnotationInfo>();
  const add = (families: readonly FamilyTable[], kind: AnnotatedKind): void => {
    for (const family of families) {
      for (const field of Object.values(family.fields)) {
        const key = annotationKey(field.annotation);
        const known = registry.get(key);
        if (known) known.kinds.push(kind);
        else registry.set(key, { key, family: family.name, kinds: [kind], doc: field.doc, field });
      }
    }
  };
  add(INGRESS_FAMILIES, "Ingress");
  add(SECRET_FAMILIES, "Secret");
  return registry;
}

const REGISTRY = buildRegistry();

/** Every known annotation, in family order. */
export const ANNOTATION_REGISTRY: readonly AnnotationInfo[] = [...REGISTRY.values()];

export function lookupAnnotation(key: string): AnnotationInfo | undefined {
  return REGISTRY.get(key);
}

/** A warning for a key Bulwark reads on other kinds of object only; undefined otherwise. */
export function wrongKindWarning(key: string, kind: AnnotatedKind): string | undefined {
  const info = REGISTRY.get(key);
  if (info === undefined || info.kinds.includes(kind)) return undefined;
  const kinds = info.kinds.map(k => PLURAL[k]).join(" and ");
  return `annotation "${key}" is read on ${kinds} only, ignored on this ${kind}`;
}
