import { isOurIngress } from "./class";
import type { Ingress, Secret } from "./types";

export const TLS_SECRET_TYPE = "kubernetes.io/tls";

/**
 * Whether an object is part of the checksummed set: Bulwark's Ingresses, and every TLS Secret
 * (Tengine counts every Secret that holds a certificate). Publisher and guard must agree on this.
 */
export function countsForChecksum(kind: "ingress" | "secret", object: Ingress | Secret): boolean {
  return kind === "ingress"
    ? isOurIngress(object as Ingress)
    : (object as Secret).type === TLS_SECRET_TYPE;
}
