// Every annotation Bulwark knows under the nginx.ingress.kubernetes.io/ prefix: its family, the
// kinds of object it is read on, and a one-line doc. Built from the families' own field tables, so
// adding an annotation to a family adds it here; docs can be generated from this list.
import { canaryFamily } from "./canary";
import { corsFamily } from "./cors";
import { annotationKey } from "./validators";
import type { Family } from "./family";
import { proxyFamily } from "./proxy";
import { redirectFamily } from "./redirect";
import { rewriteFamily } from "./rewrite";
import { robotsFamily } from "./robots";
import { ingressRolloutFamily, secretRolloutFamily } from "./rollout";
import { versionFamily } from "./version";
import { NGINX_ANNOTATION_PREFIX } from "../names";

export type AnnotatedKind = "Ingress" | "Secret";

const PLURAL: Record<AnnotatedKind, string> = { Ingress: "Ingresses", Secret: "Secrets" };

export interface AnnotationInfo {
  /** The full key, e.g. "nginx.ingress.kubernetes.io/canary-weight". */
  key: string;
  family: Family<unknown>["name"];
  kinds: AnnotatedKind[];
  doc: string;
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
];

export const SECRET_FAMILIES: readonly FamilyTable[] = [secretRolloutFamily, versionFamily];

function buildRegistry(): Map<string, AnnotationInfo> {
  const registry = new Map<string, AnnotationInfo>();
  const add = (families: readonly FamilyTable[], kind: AnnotatedKind): void => {
    for (const family of families) {
      for (const { annotation, doc } of Object.values(family.fields)) {
        const key = annotationKey(annotation);
        const known = registry.get(key);
        if (known) known.kinds.push(kind);
        else registry.set(key, { key, family: family.name, kinds: [kind], doc });
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

/**
 * Warnings for keys under our prefix that nothing reads on this kind of object. Unknown keys are
 * not errors: ingress-nginx has many annotations Bulwark does not implement, and denying them would
 * block migrations. Keys outside the prefix are not ours to judge.
 */
export function unknownAnnotationWarnings(
  annotations: Readonly<Record<string, string>> | undefined,
  kind: AnnotatedKind,
): string[] {
  const warnings: string[] = [];
  for (const key of Object.keys(annotations ?? {})) {
    if (!key.startsWith(NGINX_ANNOTATION_PREFIX)) continue;
    const info = REGISTRY.get(key);
    if (info === undefined) warnings.push(`unknown annotation "${key}", ignored`);
    else if (!info.kinds.includes(kind)) {
      const kinds = info.kinds.map(k => PLURAL[k]).join(" and ");
      warnings.push(`annotation "${key}" is read on ${kinds} only, ignored on this ${kind}`);
    }
  }
  return warnings;
}
