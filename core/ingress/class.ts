import { INGRESS_CLASS } from "../names";
import type { Ingress } from "./types";

/** The pre-IngressClass annotation, still honoured by ingress-nginx and Tengine-Ingress. */
export const LEGACY_CLASS_ANNOTATION = "kubernetes.io/ingress.class";

/** Whether Bulwark serves this Ingress: `spec.ingressClassName` first, else the legacy annotation. */
export function isOurIngress(ingress: Ingress, className = INGRESS_CLASS): boolean {
  const byField = ingress.spec?.ingressClassName;
  if (byField !== undefined) return byField === className;
  return ingress.metadata?.annotations?.[LEGACY_CLASS_ANNOTATION] === className;
}
