// From the watched objects to the view the data plane serves: class selection, the checksum
// guard's verdict per kind, batched rollout against what this pod served before, and the
// EndpointSlices and TLS pairs the served Ingresses need. Pure: the controller feeds it the cache
// and the last good state, and applies/persists what comes out.
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { annotationKey } from "../../core/annotations/validators";
import { selectsIngress, type ServingScope } from "../../core/ingress/selection";
import type { Ingress } from "../../core/ingress/types";
import type { GatewayView, TlsPair } from "../view";
import { rolloutChoice, type RolloutWord } from "./rollout";
import { ServingVerdicts } from "./verdicts";
import { sameAuthSecrets, selectAuthSecrets } from "./auth-secrets";

export type GuardedKind = "ingress" | "secret";
export const GUARDED_KINDS: readonly GuardedKind[] = ["ingress", "secret"];

/** The checksum guard's verdict on the latest objects of one kind. */
export type GuardState = "off" | "matched" | "mismatch" | "no-checksum";

/** What a pod served last time it had a good view: the view and the Secret versions behind its TLS pairs. */
export interface ServedState {
  view: Omit<GatewayView, "version">;
  /** namespace/name → resourceVersion of the Secret each TLS pair came from. */
  secretVersions: Record<string, string>;
}

export interface ComposeInput {
  ordinal: number;
  /** Every cached Ingress (not only ours). */
  ingresses: Iterable<V1Ingress>;
  /** Every cached TLS Secret, by namespace/name. */
  secrets: ReadonlyMap<string, V1Secret>;
  /** Every cached Opaque Secret (auth-secret), by namespace/name; undefined while not listed. */
  authSecrets?: ReadonlyMap<string, V1Secret> | undefined;
  /** Every cached EndpointSlice; undefined while they have not been listed yet. */
  endpointSlices: Iterable<V1EndpointSlice> | undefined;
  /** Every cached Service; undefined while they have not been listed yet. */
  services: Iterable<V1Service> | undefined;
  /** The IngressClass `bulwark` exists with controller bulwark.dev/gateway. */
  classClaimed: boolean;
  /** Which Ingresses are Bulwark's (default class, excluded namespaces): the guard's own. */
  scope: ServingScope;
  guard: Record<GuardedKind, GuardState>;
  previous: ServedState | undefined;
  /** The review of each Ingress served (memoized per object); a fresh one when absent. */
  verdicts?: ServingVerdicts;
}

export type Refusal = "mismatch" | "no-checksum" | "empty" | "class";

export interface KindOutcome {
  /** The latest objects of the kind were taken (after rollout); false: the previous ones kept. */
  accepted: boolean;
  refusal?: Refusal;
  /** How many objects the candidate set had (the checksummed set). */
  candidates: number;
  /** namespace/name → why the latest content is not served on this pod. */
  held: Record<string, string>;
}

export interface Composition {
  ingress: KindOutcome;
  secret: KindOutcome;
  /** The state to serve; undefined when no good view can be made (a fresh pod, refused data). */
  state: ServedState | undefined;
  problems: string[];
}

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

export function keyOf(object: { metadata?: { namespace?: string; name?: string } }): string {
  return `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
}

function refusalOf(state: GuardState): Refusal | undefined {
  if (state === "mismatch" || state === "no-checksum") return state;
  return undefined;
}

function byKey<T extends { metadata?: { namespace?: string; name?: string } }>(
  items: readonly T[] | undefined,
): Map<string, T> {
  return new Map((items ?? []).map(item => [keyOf(item), item]));
}

interface Rolled<T> {
  served: T[];
  held: Record<string, string>;
}

/** Rollout over the latest objects: latest, the previously served version, or nothing. */
function rollOut<L, S>(
  word: RolloutWord,
  latest: Iterable<[string, L]>,
  how: {
    ordinal: number;
    previous: ReadonlyMap<string, S>;
    meta: (object: L) => V1Ingress["metadata"];
    take: (object: L) => S | undefined;
  },
): Rolled<S> {
  const served: S[] = [];
  const held: Record<string, string> = {};
  for (const [key, object] of latest) {
    const meta = how.meta(object);
    const before = how.previous.get(key);
    const choice = rolloutChoice(
      word,
      { annotations: meta?.annotations, terminating: meta?.deletionTimestamp !== undefined },
      how.ordinal,
      before !== undefined,
    );
    if (choice.held !== undefined) held[key] = choice.held;
    const chosen =
      choice.serve === "latest"
        ? how.take(object)
        : choice.serve === "previous"
          ? before
          : undefined;
    if (chosen !== undefined) served.push(chosen);
  }
  return { served, held };
}

interface ComposedIngresses {
  outcome: KindOutcome;
  served?: V1Ingress[];
  /** namespace/name → why, for the served Ingresses that fail the review. */
  refused?: Record<string, string>;
}

/** The served Ingresses that fail the admission review, and why. */
function refusedOf(input: ComposeInput, served: readonly V1Ingress[]): Record<string, string> {
  const verdicts = input.verdicts ?? new ServingVerdicts();
  const refused: Record<string, string> = {};
  for (const ingress of served) {
    const refusal = verdicts.refusal(ingress, input.secrets);
    if (refusal !== undefined) refused[keyOf(ingress)] = refusal;
  }
  return refused;
}

function composeIngresses(input: ComposeInput): ComposedIngresses {
  const previous = input.previous?.view.ingresses;
  const ours = [...input.ingresses].filter(i => selectsIngress(i as Ingress, input.scope));
  const base = { candidates: ours.length, held: {} };
  const refusal: Refusal | undefined = !input.classClaimed
    ? "class"
    : refusalOf(input.guard.ingress);
  const wasServing = (previous?.length ?? 0) > 0;
  const kept = { served: previous, refused: input.previous?.view.refused };
  if (refusal || (ours.length === 0 && wasServing)) {
    return { outcome: { ...base, accepted: false, refusal: refusal ?? "empty" }, ...kept };
  }
  const rolled = rollOut(
    "ingress",
    ours.map(i => [keyOf(i), i] as [string, V1Ingress]),
    {
      ordinal: input.ordinal,
      previous: byKey(previous),
      meta: i => i.metadata,
      take: i => i,
    },
  );
  if (rolled.served.length === 0 && wasServing) {
    return { outcome: { ...base, accepted: false, refusal: "empty" }, ...kept };
  }
  return {
    outcome: { ...base, accepted: true, held: rolled.held },
    served: rolled.served,
    refused: refusedOf(input, rolled.served),
  };
}

const decoded = (base64: string | undefined): string =>
  base64 ? Buffer.from(base64, "base64").toString("utf8") : "";

/** A Secret's pair; one with ca.crt alone serves proxy-ssl-secret (cert and key ""). */
function decodePair(key: string, secret: V1Secret, problems: string[]): TlsPair | undefined {
  const data = secret.data ?? {};
  const cert = decoded(data["tls.crt"]);
  const key_ = decoded(data["tls.key"]);
  const ca = decoded(data["ca.crt"]);
  const both = cert !== "" && key_ !== "";
  if (!both && ca === "") {
    problems.push(`Secret ${key}: tls.crt and tls.key are required`);
    return undefined;
  }
  const pair: TlsPair = {
    namespace: secret.metadata?.namespace ?? "",
    name: secret.metadata?.name ?? "",
    cert: both ? cert : "",
    key: both ? key_ : "",
  };
  if (ca !== "") pair.ca = ca;
  return pair;
}

/** The namespace/name proxy-ssl-secret names in the Ingress's own namespace, if any. */
export function upstreamSecretOf(ingress: V1Ingress): string | undefined {
  const raw = ingress.metadata?.annotations?.[PROXY_SSL_SECRET]?.trim();
  const namespace = ingress.metadata?.namespace ?? "";
  return raw !== undefined && raw.startsWith(`${namespace}/`) ? raw : undefined;
}

const PROXY_SSL_SECRET = annotationKey("proxy-ssl-secret");

/** namespace/name of every Secret the Ingresses name in spec.tls or proxy-ssl-secret. */
export function referencedSecrets(ingresses: readonly V1Ingress[]): Set<string> {
  const keys = new Set<string>();
  for (const ingress of ingresses) {
    for (const tls of ingress.spec?.tls ?? []) {
      if (tls.secretName) keys.add(`${ingress.metadata?.namespace ?? ""}/${tls.secretName}`);
    }
    const upstream = upstreamSecretOf(ingress);
    if (upstream !== undefined) keys.add(upstream);
  }
  return keys;
}

interface PairsResult {
  outcome: KindOutcome;
  pairs?: TlsPair[];
  versions: Record<string, string>;
}

const pairKey = (pair: TlsPair): string => `${pair.namespace}/${pair.name}`;

/** The cached Secrets that served Ingresses name; a missing one is a problem unless it served before. */
function wantedSecrets(
  input: ComposeInput,
  ingresses: readonly V1Ingress[],
  before: ReadonlyMap<string, TlsPair>,
  problems: string[],
): [string, V1Secret][] {
  const wanted: [string, V1Secret][] = [];
  for (const key of referencedSecrets(ingresses)) {
    const secret = input.secrets.get(key);
    if (secret) wanted.push([key, secret]);
    else if (!before.has(key)) {
      problems.push(`Secret ${key}: not found (or not of type kubernetes.io/tls)`);
    }
  }
  return wanted;
}

function keptPairs(input: ComposeInput, base: Omit<KindOutcome, "accepted">): PairsResult {
  const refusal = refusalOf(input.guard.secret) ?? "empty";
  return {
    outcome: { ...base, accepted: false, refusal },
    pairs: input.previous?.view.tlsPairs,
    versions: input.previous?.secretVersions ?? {},
  };
}

/** The Secret version behind each served pair: the fresh one, or the one served before. */
function pairVersions(input: ComposeInput, rolled: Rolled<TlsPair>): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const pair of rolled.served) {
    const key = pairKey(pair);
    const kept = rolled.held[key] !== undefined;
    const fresh = input.secrets.get(key)?.metadata?.resourceVersion;
    versions[key] = (kept ? input.previous?.secretVersions[key] : fresh) ?? "";
  }
  return versions;
}

function composePairs(
  input: ComposeInput,
  ingresses: readonly V1Ingress[],
  problems: string[],
): PairsResult {
  const previous = input.previous;
  const base = { candidates: input.secrets.size, held: {} };
  const wasServing = (previous?.view.tlsPairs.length ?? 0) > 0;
  if (refusalOf(input.guard.secret) || (input.secrets.size === 0 && wasServing)) {
    return keptPairs(input, base);
  }
  const before = new Map((previous?.view.tlsPairs ?? []).map(p => [pairKey(p), p]));
  const rolled = rollOut("secret", wantedSecrets(input, ingresses, before, problems), {
    ordinal: input.ordinal,
    previous: before,
    meta: s => s.metadata,
    take: s => decodePair(keyOf(s), s, problems),
  });
  return {
    outcome: { ...base, accepted: true, held: rolled.held },
    pairs: rolled.served,
    versions: pairVersions(input, rolled),
  };
}

const DEFAULT_BACKEND_KEY = annotationKey("default-backend");

/** default-backend names a Service of the Ingress's namespace (error pages, no-endpoint fallback). */
function defaultBackendAnnotation(ingress: V1Ingress): string | undefined {
  return ingress.metadata?.annotations?.[DEFAULT_BACKEND_KEY];
}

function backendServices(ingress: V1Ingress): (string | undefined)[] {
  const spec = ingress.spec;
  const names = [spec?.defaultBackend?.service?.name, defaultBackendAnnotation(ingress)];
  for (const rule of spec?.rules ?? []) {
    for (const path of rule.http?.paths ?? []) names.push(path.backend?.service?.name);
  }
  return names;
}

/** namespace/service of every Service the Ingresses route to. */
export function referencedServices(ingresses: readonly V1Ingress[]): Set<string> {
  const services = new Set<string>();
  for (const ingress of ingresses) {
    const namespace = ingress.metadata?.namespace ?? "";
    for (const name of backendServices(ingress)) if (name) services.add(`${namespace}/${name}`);
  }
  return services;
}

function selectSlices(input: ComposeInput, services: ReadonlySet<string>): V1EndpointSlice[] {
  if (input.endpointSlices === undefined) return input.previous?.view.endpointSlices ?? [];
  const slices: V1EndpointSlice[] = [];
  for (const slice of input.endpointSlices) {
    const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (service && services.has(`${slice.metadata?.namespace ?? ""}/${service}`))
      slices.push(slice);
  }
  return slices;
}

/** The Services the Ingresses route to (the previous ones while Services are not listed yet). */
function selectServices(input: ComposeInput, wanted: ReadonlySet<string>): V1Service[] {
  if (input.services === undefined) return input.previous?.view.services ?? [];
  return [...input.services].filter(service => wanted.has(keyOf(service)));
}

/** The view this pod should serve now, and why each kind was or was not taken. */
export function composeView(input: ComposeInput): Composition {
  const problems: string[] = [];
  const ingress = composeIngresses(input);
  const ingresses = ingress.served;
  if (!ingresses) {
    const secret = { accepted: false, candidates: input.secrets.size, held: {} };
    return { ingress: ingress.outcome, secret, state: undefined, problems };
  }
  const secret = composePairs(input, ingresses, problems);
  if (!secret.pairs)
    return { ingress: ingress.outcome, secret: secret.outcome, state: undefined, problems };
  const services = referencedServices(ingresses);
  const view = {
    ingresses,
    refused: ingress.refused ?? {},
    tlsPairs: secret.pairs,
    authSecrets: selectAuthSecrets(
      input.authSecrets,
      ingresses,
      input.previous?.view.authSecrets,
      problems,
    ),
    endpointSlices: selectSlices(input, services),
    services: selectServices(input, services),
  };
  return {
    ingress: ingress.outcome,
    secret: secret.outcome,
    state: { view, secretVersions: secret.versions },
    problems,
  };
}

/**
 * Whether two states serve the same thing, by reference: the cache replaces an object only when
 * it changes, and keeps each key in place, so an unchanged view holds the very same objects in
 * the same order. O(n) pointer compares, no hashing: at 20k Ingresses this runs on every change.
 * A state read from disk never equals a fresh one, so the first view from the API is applied.
 */
export function sameServed(a: ServedState, b: ServedState): boolean {
  const same = <T>(x: readonly T[], y: readonly T[]): boolean =>
    x.length === y.length && x.every((item, i) => item === y[i]);
  const pairs = (state: ServedState): string[] =>
    state.view.tlsPairs.map(
      p => `${p.namespace}/${p.name}@${state.secretVersions[`${p.namespace}/${p.name}`] ?? ""}`,
    );
  return (
    same(a.view.ingresses, b.view.ingresses) &&
    same(a.view.endpointSlices, b.view.endpointSlices) &&
    same(a.view.services ?? [], b.view.services ?? []) &&
    same(pairs(a), pairs(b)) &&
    sameAuthSecrets(a.view.authSecrets, b.view.authSecrets) &&
    sameRefusals(a.view.refused ?? {}, b.view.refused ?? {})
  );
}

function sameRefusals(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every(key => a[key] === b[key]);
}
