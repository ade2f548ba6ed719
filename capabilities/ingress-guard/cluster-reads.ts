// The reads admission needs: the TLS Secrets an Ingress names, the Ingresses that name a Secret.
// Through the kept-alive reader: the API server waits on each of them.
import type { Result } from "../../core/result";
import type { CertificateFacts } from "../../core/tls/certificate";
import { InspectionCache } from "../../core/tls/inspection-cache";
import { selectsIngress, type ServingScope } from "../../core/ingress/selection";
import type { Ingress } from "../../core/ingress/types";
import type { SecretLookup } from "../../core/ingress/validate-tls";
import { INGRESSES, INGRESS_CLASSES, SECRETS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import type { V1IngressClass } from "@kubernetes/client-node";
import { isDefaultClass, namesNoClass } from "../../core/ingress/class";
import { INGRESS_CLASS } from "../../core/names";
import { secretsNamedBy } from "./tls-users";
import { watchedIngresses } from "./watched-ingresses";
import { Log } from "pepr";
import { pairOf, watchedTlsPairs, type TlsPair } from "./tls-secrets";
import type { Secret } from "../../core/ingress/types";

/**
 * The most Secrets one review reads from the API server (those no watch here holds), so an
 * Ingress naming thousands cannot make its review thousands of requests. Steady state, the watch
 * holds every Secret there is, so the rest are absent: judged as not existing yet (a warning), and
 * the gateway checks every pair it serves.
 */
export const MAX_SECRET_READS = 64;

/** The same Secret is read for every Ingress naming it: parse its pair once while it is unchanged. */
const inspections = new InspectionCache();

/**
 * Where a read is served from. "cached": the API server's watch cache (resourceVersion=0), a
 * moment behind etcd but without etcd's quorum read; a Secret it does not hold yet is read from
 * etcd. "latest": etcd, as the API server stores it now. Admission's "cached" pass first takes
 * the copy its own watch holds (admissionPairs).
 */
export type Freshness = "cached" | "latest";

/** One Secret; undefined when it does not exist. */
async function readSecret(
  namespace: string,
  name: string,
  freshness: Freshness,
): Promise<Secret | undefined> {
  const path = resourcePath(SECRETS, { namespace, name });
  const secret = await keptAliveApi().getIfExists<Secret>(
    freshness === "cached" ? `${path}?resourceVersion=0` : path,
  );
  // Created a moment ago (one apply of a Secret and its Ingress): etcd has it first.
  if (secret === undefined && freshness === "cached") return readSecret(namespace, name, "latest");
  return secret;
}

/**
 * Where a review's pairs come from: a copy held in this process (a watch's), else a read of
 * `read` freshness.
 */
export interface PairSource {
  held?: (namespace: string, name: string) => TlsPair | undefined;
  read: Freshness;
}

/** Admission's: "cached" takes the admission watch's copy when it holds one. */
export function admissionPairs(freshness: Freshness): PairSource {
  return freshness === "cached"
    ? { held: (namespace, name) => watchedTlsPairs.pair(namespace, name), read: "cached" }
    : { read: "latest" };
}

/**
 * Facts about each named Secret; undefined for a Secret that does not exist, or that no watch
 * here holds once MAX_SECRET_READS have been read. `now` undefined: the validity period is not
 * checked (serving, not admission).
 */
export async function tlsSecretLookup(
  namespace: string,
  names: string[],
  now: Date | undefined,
  source: PairSource,
): Promise<SecretLookup> {
  const facts = new Map<string, Result<CertificateFacts> | undefined>();
  const unheld: string[] = [];
  for (const name of new Set(names)) {
    const held = source.held?.(namespace, name);
    if (held === undefined) unheld.push(name);
    else facts.set(name, inspections.inspect(held.certPem, held.keyPem, now));
  }
  if (unheld.length > MAX_SECRET_READS) {
    Log.warn(
      { ns: namespace, secrets: unheld.length, read: MAX_SECRET_READS },
      "an Ingress review names more TLS Secrets than it reads; the rest are judged absent",
    );
  }
  await Promise.all(
    unheld.slice(0, MAX_SECRET_READS).map(async name => {
      const secret = await readSecret(namespace, name, source.read);
      const pair = secret && pairOf(secret);
      facts.set(name, pair && inspections.inspect(pair.certPem, pair.keyPem, now));
    }),
  );
  return name => facts.get(name);
}

/**
 * Whether IngressClass bulwark is the cluster's default now (absent: it is not): admission's read
 * and the watcher's resync's, on the kept-alive reader.
 */
export async function classIsDefaultNow(): Promise<boolean> {
  const path = resourcePath(INGRESS_CLASSES, { name: INGRESS_CLASS });
  return isDefaultClass(await keptAliveApi().getIfExists<V1IngressClass>(path));
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
  const watched = watchedIngresses.usersOf(namespace, secretName);
  const candidates =
    watched ??
    (await keptAliveApi().get<{ items: Ingress[] }>(resourcePath(INGRESSES, { namespace }))).items;
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
