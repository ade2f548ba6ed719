import { INGRESS_CLASS } from "../names";
import type { Ingress, ObjectMeta } from "./types";

/** The pre-IngressClass annotation, still honoured by ingress-nginx and Tengine-Ingress. */
export const LEGACY_CLASS_ANNOTATION = "kubernetes.io/ingress.class";

/** Marks an IngressClass as the cluster's default (Kubernetes reads exactly "true"). */
export const DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";

/** Whether Bulwark serves this Ingress: `spec.ingressClassName` first, else the legacy annotation. */
export function isOurIngress(ingress: Ingress, className = INGRESS_CLASS): boolean {
  const byField = ingress.spec?.ingressClassName;
  if (byField !== undefined) return byField === className;
  return ingress.metadata?.annotations?.[LEGACY_CLASS_ANNOTATION] === className;
}

/** Whether an IngressClass carries the default-class annotation. */
export function isDefaultClass(ingressClass: { metadata?: ObjectMeta } | undefined): boolean {
  return ingressClass?.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true";
}

/** Whether an Ingress names no class at all, neither by field nor by the legacy annotation. */
export function namesNoClass(ingress: Ingress): boolean {
  const byField = ingress.spec?.ingressClassName;
  return (
    (byField === undefined || byField === "") &&
    ingress.metadata?.annotations?.[LEGACY_CLASS_ANNOTATION] === undefined
  );
}
