// The reads admission needs: the TLS Secrets an Ingress names, the Ingresses that name a Secret.
// Through the kept-alive reader: the API server waits on each of them.
import type { Result } from "../../core/result";
import type { CertificateFacts } from "../../core/tls/certificate";
import { InspectionCache } from "../../core/tls/inspection-cache";
import { selectsIngress, type ServingScope } from "../../core/ingress/selection";
import type { Ingress } from "../../core/ingress/types";
import type { SecretLookup } from "../../core/ingress/validate-tls";
import { isNotFound } from "../../kube/api-errors";
import { apiReader } from "../../kube/api-reader";
import type { V1IngressClass } from "@kubernetes/client-node";
import { isDefaultClass, namesNoClass } from "../../core/ingress/class";
import { INGRESS_CLASS } from "../../core/names";
import { secretsNamedBy, tlsUsers } from "./tls-users";
import type { Secret } from "../../core/ingress/types";

function decode(value: string | undefined): string {
  return value === undefined ? "" : Buffer.from(value, "base64").toString("utf8");
}

/** The same Secret is read for every Ingress naming it: parse its pair once while it is unchanged. */
const inspections = new InspectionCache();

/**
 * Facts about each named Secret as stored (base64 data); undefined for a Secret that does not
 * exist. `now` undefined: the validity period is not checked (serving, not admission).
 */
export async function tlsSecretLookup(
  namespace: string,
  names: string[],
  now: Date | undefined,
): Promise<SecretLookup> {
  const facts = new Map<string, Result<CertificateFacts> | undefined>();
  await Promise.all(
    [...new Set(names)].map(async name => {
      try {
        const secret = await apiReader().get<Secret>(
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
        );
        facts.set(
          name,
          inspections.inspect(
            decode(secret.data?.["tls.crt"]),
            decode(secret.data?.["tls.key"]),
            now,
          ),
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
        facts.set(name, undefined);
      }
    }),
  );
  return name => facts.get(name);
}

/**
 * Whether IngressClass bulwark is the cluster's default now (absent: it is not): admission's read,
 * on the kept-alive reader (the watcher's reconciler reads it through Pepr's client, scope.ts).
 */
export async function classIsDefaultNow(): Promise<boolean> {
  try {
    const path = `/apis/networking.k8s.io/v1/ingressclasses/${INGRESS_CLASS}`;
    return isDefaultClass(await apiReader().get<V1IngressClass>(path));
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * Bulwark's Ingresses in `namespace` whose tls entries name `secretName`. `scope` is asked only
 * when some Ingress names the Secret, and told whether one of them names no class (then whether
 * Bulwark's class is the default decides, which costs a read).
 */
export async function ingressesUsingSecret(
  namespace: string,
  secretName: string,
  scope: (classless: boolean) => Promise<ServingScope>,
): Promise<Ingress[]> {
  const watched = tlsUsers.users(namespace, secretName);
  const candidates =
    watched ??
    (
      await apiReader().get<{ items: Ingress[] }>(
        `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/ingresses`,
      )
    ).items;
  return usersOf(candidates, secretName, scope);
}

/** Of `candidates`, Bulwark's Ingresses naming `secretName` (ingressesUsingSecret's choice). */
export async function usersOf(
  candidates: Ingress[],
  secretName: string,
  scope: (classless: boolean) => Promise<ServingScope>,
): Promise<Ingress[]> {
  const naming = candidates.filter(ingress => secretsNamedBy(ingress).includes(secretName));
  if (naming.length === 0) return [];
  const serving = await scope(naming.some(namesNoClass));
  return naming.filter(ingress => selectsIngress(ingress, serving));
}

export function secretNamesOf(ingresses: Ingress[]): string[] {
  return ingresses.flatMap(secretsNamedBy);
}
