// Incremental route compilation: at 20k Ingresses a full compile costs 100–600 ms per change, and
// a change usually touches one host. A host's routes depend only on the Ingresses with a rule for
// that host (their order, annotations and backends), so only the hosts a change touches are
// compiled again, by the ordinary compiler over just the Ingresses of those hosts, and the
// previous table's other hosts are reused as they are (tables are immutable). The result is a new
// table with a single version, swapped in one step like a full compile's.
//
// The Ingresses recompiled form a set closed under "has a rule for the same host": then every
// host they touch is compiled with all of its Ingresses, exactly as a full compile would. Rules
// without host and spec.defaultBackend share the any-host key "" (the oldest default backend
// serves unknown hosts). Too large a set falls back to a full compile.
import type { V1EndpointSlice, V1Ingress, V1Service } from "@kubernetes/client-node";
import { wwwCounterpart } from "../../core/annotations";
import { annotationKey } from "../../core/annotations/validators";
import { referencedServices, upstreamSecretOf } from "../selection/compose";
import { authSecretOf } from "../policy/basic-auth";
import type { GatewayView } from "../view";
import { compileRoutes, type CompiledRoutes } from "./compile";
import { SERVICE_NAME_LABEL } from "./endpoints";
import { forEachRoute, type HostRoutes, type RouteTable, type RouteTableStats } from "./table";
import { objectKey } from "../../core/object-key";

/** The any-host key: rules without host and default backends. */
export const ANY_HOST = "";

/** What the index keeps of one Ingress. */
export interface IndexedIngress {
  id: string;
  /** The object of this version. */
  object: V1Ingress;
  /** Identity of this version of the object (uid@resourceVersion, or its JSON without one). */
  fingerprint: string;
  /** Host keys it has rules for: the host as written ("*.x" for wildcards), ANY_HOST. */
  hosts: readonly string[];
  /** namespace/service of its backends. */
  services: readonly string[];
  /** namespace/name of the Secret its proxy-ssl-secret names (its routes' upstream TLS). */
  secrets: readonly string[];
  /** The last update that saw it (to find the ones a view no longer has). */
  seen: number;
}

/** Identity of an object version: uid@resourceVersion from the API server, else its content. */
export function fingerprint(object: {
  metadata?: { uid?: string; resourceVersion?: string };
}): string {
  const meta = object.metadata;
  if (meta?.resourceVersion !== undefined) return `${meta.uid ?? ""}@${meta.resourceVersion}`;
  return JSON.stringify(object);
}

export function indexIngress(ingress: V1Ingress, seen = 0): IndexedIngress {
  const hosts = new Set<string>();
  const spec = ingress.spec;
  if (spec?.defaultBackend !== undefined) hosts.add(ANY_HOST);
  for (const rule of spec?.rules ?? []) hosts.add(rule.host ?? ANY_HOST);
  for (const name of extraNamesOf(ingress, hosts)) hosts.add(name);
  return {
    id: objectKey(ingress),
    object: ingress,
    fingerprint: fingerprint(ingress),
    hosts: [...hosts],
    services: [...referencedServices([ingress])],
    secrets: upstreamSecrets(ingress),
    seen,
  };
}

function upstreamSecrets(ingress: V1Ingress): string[] {
  const secrets = [upstreamSecretOf(ingress), authSecretOf(ingress)];
  return secrets.filter(secret => secret !== undefined);
}

/**
 * The names server-alias and from-to-www-redirect may give the Ingress's hosts: a host rule for
 * one of them takes it back, so their Ingresses are compiled together. Read loosely (a value that
 * does not parse only makes more hosts dirty).
 */
function extraNamesOf(ingress: V1Ingress, hosts: ReadonlySet<string>): string[] {
  const annotations = ingress.metadata?.annotations;
  const names: string[] = [];
  const aliases = annotations?.[annotationKey("server-alias")];
  for (const alias of aliases?.split(",") ?? []) names.push(alias.trim().toLowerCase());
  if (annotations?.[annotationKey("from-to-www-redirect")] !== undefined) {
    for (const host of hosts) names.push(wwwCounterpart(host) ?? ANY_HOST);
  }
  return names.filter(name => name !== ANY_HOST);
}

function serviceKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ""}/${name ?? ""}`;
}

function append(parts: Map<string, string[]>, key: string, part: string): void {
  const list = parts.get(key);
  if (list === undefined) parts.set(key, [part]);
  else list.push(part);
}

/** namespace/service → one string that changes when any of its slices or the Service changes. */
export function serviceSignatures(
  slices: readonly V1EndpointSlice[],
  services: readonly V1Service[] = [],
): Map<string, string> {
  const parts = new Map<string, string[]>();
  for (const slice of slices) {
    const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (service !== undefined)
      append(parts, serviceKey(slice.metadata?.namespace, service), `slice ${fingerprint(slice)}`);
  }
  for (const service of services) {
    const key = serviceKey(service.metadata?.namespace, service.metadata?.name);
    append(parts, key, `service ${fingerprint(service)}`);
  }
  return new Map([...parts].map(([key, list]) => [key, list.sort().join("\n")]));
}

/** Keys whose value differs between two maps (added, removed or changed). */
export function changedKeys<T>(before: ReadonlyMap<string, T>, after: ReadonlyMap<string, T>) {
  const changed = new Set<string>();
  for (const [key, value] of after) if (before.get(key) !== value) changed.add(key);
  for (const key of before.keys()) if (!after.has(key)) changed.add(key);
  return changed;
}

function link(map: Map<string, Set<string>>, keys: readonly string[], id: string): void {
  for (const key of keys) {
    const ids = map.get(key);
    if (ids === undefined) map.set(key, new Set([id]));
    else ids.add(id);
  }
}

function unlink(map: Map<string, Set<string>>, keys: readonly string[], id: string): void {
  for (const key of keys) {
    const ids = map.get(key);
    ids?.delete(id);
    if (ids?.size === 0) map.delete(key);
  }
}

/**
 * The Ingresses of the views seen so far, by id, host and Service, kept up to date view by view.
 * An unchanged Ingress costs one WeakMap lookup (the same object) or one string compare (the
 * same uid@resourceVersion after a copy, as worker processes get).
 */
export class Index {
  readonly ingresses = new Map<string, IndexedIngress>();
  readonly byHost = new Map<string, Set<string>>();
  readonly byService = new Map<string, Set<string>>();
  readonly bySecret = new Map<string, Set<string>>();
  services = new Map<string, string>();
  /** The content of each Secret some proxy-ssl-secret names, as last compiled. */
  secrets = new Map<string, string>();
  /** The view's refusals (selection/verdicts.ts): a changed one recompiles that Ingress's hosts. */
  refused = new Map<string, string>();
  readonly #known = new WeakMap<V1Ingress, IndexedIngress>();
  #generation = 0;

  /** Takes in a view; returns the hosts its changes touch (those of changed Ingresses and Services). */
  update(view: GatewayView): Set<string> {
    const seen = ++this.#generation;
    const hosts = new Set<string>();
    for (const ingress of view.ingresses) {
      const known = this.#known.get(ingress);
      if (known !== undefined && this.ingresses.get(known.id) === known) known.seen = seen;
      else this.#take(ingress, seen, hosts);
    }
    for (const [id, gone] of this.ingresses) {
      if (gone.seen === seen) continue;
      this.#replace(id, gone, undefined);
      for (const host of gone.hosts) hosts.add(host);
    }
    this.#updateServices(view, hosts);
    this.#updateSecrets(view, hosts);
    this.#updateRefusals(view, hosts);
    return hosts;
  }

  /** A proxy-ssl-secret's Secret that appeared, changed or went recompiles its Ingresses' hosts. */
  #updateSecrets(view: GatewayView, hosts: Set<string>): void {
    if (this.bySecret.size === 0 && this.secrets.size === 0) return;
    const secrets = new Map<string, string>();
    for (const pair of view.tlsPairs) {
      const key = `${pair.namespace}/${pair.name}`;
      if (this.bySecret.has(key)) secrets.set(key, `${pair.cert}\0${pair.key}\0${pair.ca ?? ""}`);
    }
    this.#authSignatures(view, secrets);
    for (const changed of changedKeys(this.secrets, secrets)) this.#touchSecret(changed, hosts);
    this.secrets = secrets;
  }

  /** The hosts of the Ingresses that name the Secret (a TLS pair's key, or "auth:" and its key). */
  #touchSecret(changed: string, hosts: Set<string>): void {
    const secret = changed.startsWith("auth:") ? changed.slice(5) : changed;
    for (const id of this.bySecret.get(secret) ?? [])
      for (const host of this.ingresses.get(id)?.hosts ?? []) hosts.add(host);
  }

  /** auth-secret Secrets' content, under "auth:" keys beside the TLS pairs'. */
  #authSignatures(view: GatewayView, secrets: Map<string, string>): void {
    for (const auth of view.authSecrets ?? []) {
      const key = `${auth.namespace}/${auth.name}`;
      if (this.bySecret.has(key)) secrets.set(`auth:${key}`, JSON.stringify(auth.data));
    }
  }

  #updateRefusals(view: GatewayView, hosts: Set<string>): void {
    const refused = new Map(Object.entries(view.refused ?? {}));
    for (const id of changedKeys(this.refused, refused))
      for (const host of this.ingresses.get(id)?.hosts ?? []) hosts.add(host);
    this.refused = refused;
  }

  #updateServices(view: GatewayView, hosts: Set<string>): void {
    const services = serviceSignatures(view.endpointSlices, view.services);
    for (const service of changedKeys(this.services, services)) {
      for (const id of this.byService.get(service) ?? [])
        for (const host of this.ingresses.get(id)?.hosts ?? []) hosts.add(host);
    }
    this.services = services;
  }

  #take(ingress: V1Ingress, seen: number, hosts: Set<string>): void {
    const id = objectKey(ingress);
    const before = this.ingresses.get(id);
    if (before !== undefined && before.fingerprint === fingerprint(ingress)) {
      before.seen = seen;
      before.object = ingress;
      this.#known.set(ingress, before);
      return;
    }
    const after = indexIngress(ingress, seen);
    this.#known.set(ingress, after);
    this.#replace(id, before, after);
    for (const host of [...(before?.hosts ?? []), ...after.hosts]) hosts.add(host);
  }

  #replace(id: string, before: IndexedIngress | undefined, after: IndexedIngress | undefined) {
    if (before !== undefined) {
      unlink(this.byHost, before.hosts, id);
      unlink(this.byService, before.services, id);
      unlink(this.bySecret, before.secrets, id);
    }
    if (after === undefined) {
      this.ingresses.delete(id);
      return;
    }
    this.ingresses.set(id, after);
    link(this.byHost, after.hosts, id);
    link(this.byService, after.services, id);
    link(this.bySecret, after.secrets, id);
  }
}

/**
 * The Ingresses to recompile: every one with a rule for a dirty host, and so on until closed (the
 * hosts they touch become dirty too). Undefined once it grows past `limit`.
 */
export function closeOver(
  index: Index,
  hosts: Set<string>,
  limit: number,
): Set<string> | undefined {
  const ids = new Set<string>();
  const queue = [...hosts];
  for (let host = queue.pop(); host !== undefined; host = queue.pop()) {
    for (const id of index.byHost.get(host) ?? []) {
      if (ids.has(id)) continue;
      if (ids.size >= limit) return undefined;
      ids.add(id);
      const more = index.ingresses.get(id)?.hosts.filter(other => !hosts.has(other)) ?? [];
      for (const other of more) hosts.add(other);
      queue.push(...more);
    }
  }
  return ids;
}

/** The part of a view that the Ingresses `ids` need. */
export function subView(view: GatewayView, index: Index, ids: ReadonlySet<string>): GatewayView {
  const ingresses: V1Ingress[] = [];
  const services = new Set<string>();
  for (const id of ids) {
    const indexed = index.ingresses.get(id);
    if (indexed === undefined) continue;
    ingresses.push(indexed.object);
    for (const service of indexed.services) services.add(service);
  }
  const named = (namespace: string | undefined, name: string | undefined) =>
    services.has(serviceKey(namespace, name));
  return {
    version: view.version,
    ingresses,
    refused: view.refused,
    tlsPairs: view.tlsPairs,
    authSecrets: view.authSecrets,
    endpointSlices: view.endpointSlices.filter(s =>
      named(s.metadata?.namespace, s.metadata?.labels?.[SERVICE_NAME_LABEL]),
    ),
    services: view.services?.filter(s => named(s.metadata?.namespace, s.metadata?.name)),
  };
}

/** The routes a host holds (fallbacks are counted where they are defined, not here). */
function routeCount(routes: HostRoutes | undefined): number {
  if (routes === undefined) return 0;
  let count = 0;
  const table: RouteTable = {
    version: 0,
    exactHosts: new Map([["", routes]]),
    wildcardHosts: new Map(),
    anyHost: undefined,
    stats: { hosts: 0, wildcardHosts: 0, routes: 0, backends: 0, endpoints: 0 },
  };
  forEachRoute(table, route => (count += route === routes.fallback ? 0 : 1));
  return count;
}

function hostRoutes(table: RouteTable, host: string): HostRoutes | undefined {
  if (host === ANY_HOST) return table.anyHost;
  if (host.startsWith("*.")) return table.wildcardHosts.get(host.slice(2));
  return table.exactHosts.get(host);
}

/** Sets or removes one host's routes in the maps being built. */
function place(
  into: { exact: Map<string, HostRoutes>; wildcard: Map<string, HostRoutes> },
  host: string,
  routes: HostRoutes | undefined,
): void {
  const wildcard = host.startsWith("*.");
  const map = wildcard ? into.wildcard : into.exact;
  const key = wildcard ? host.slice(2) : host;
  if (routes === undefined) map.delete(key);
  else map.set(key, routes);
}

/** Backends and endpoints of a table, by backend key (routes share Backends per compile). */
export function backendStats(table: RouteTable): Pick<RouteTableStats, "backends" | "endpoints"> {
  const endpoints = new Map<string, number>();
  forEachRoute(table, route => {
    endpoints.set(route.backend.key, route.backend.endpoints.length);
    for (const canary of route.canaries)
      endpoints.set(canary.backend.key, canary.backend.endpoints.length);
  });
  let count = 0;
  for (const n of endpoints.values()) count += n;
  return { backends: endpoints.size, endpoints: count };
}

/** The previous table with the dirty hosts taken from `partial`; one new version. */
export function mergeTables(
  previous: RouteTable,
  partial: RouteTable,
  hosts: ReadonlySet<string>,
): RouteTable {
  const into = { exact: new Map(previous.exactHosts), wildcard: new Map(previous.wildcardHosts) };
  let routes = previous.stats.routes;
  for (const host of hosts) {
    if (host === ANY_HOST) continue;
    const fresh = hostRoutes(partial, host);
    routes += routeCount(fresh) - routeCount(hostRoutes(previous, host));
    place(into, host, fresh);
  }
  const anyHost = hosts.has(ANY_HOST) ? partial.anyHost : previous.anyHost;
  routes += routeCount(anyHost) - routeCount(previous.anyHost);
  const table: RouteTable = {
    ...partial,
    exactHosts: into.exact,
    wildcardHosts: into.wildcard,
    anyHost,
    stats: { ...partial.stats, hosts: into.exact.size, wildcardHosts: into.wildcard.size, routes },
  };
  return withBackendStats(table);
}

function withBackendStats(table: RouteTable): RouteTable {
  return { ...table, stats: { ...table.stats, ...backendStats(table) } };
}

/** The Ingress id a compile problem names ("namespace/name: field: message"). */
export function problemOwner(problem: string): string {
  const end = problem.indexOf(": ");
  return end < 0 ? problem : problem.slice(0, end);
}

function problemsById(problems: readonly string[]): Map<string, string[]> {
  const byId = new Map<string, string[]>();
  for (const problem of problems) {
    const id = problemOwner(problem);
    const list = byId.get(id);
    if (list === undefined) byId.set(id, [problem]);
    else list.push(problem);
  }
  return byId;
}

export interface IncrementalOptions {
  /** The compiler (compileRoutes with the data plane's options). */
  compile?: (view: GatewayView) => CompiledRoutes;
  /** Above this share of all Ingresses to recompile, a full compile is as cheap (default 0.25). */
  maxShare?: number;
}

/** Compiles views one after another, each against the previous one's table. Not pure: keeps it. */
export class IncrementalRoutes {
  readonly #compile: (view: GatewayView) => CompiledRoutes;
  readonly #maxShare: number;
  readonly #index = new Index();
  #table: RouteTable | undefined;
  #problems = new Map<string, string[]>();
  /** How the last view was compiled, for tests and metrics. */
  lastMode: "full" | "incremental" | undefined;
  /** Ingresses recompiled for the last view. */
  lastRecompiled = 0;

  constructor(options: IncrementalOptions = {}) {
    this.#compile = options.compile ?? (view => compileRoutes(view));
    this.#maxShare = options.maxShare ?? 0.25;
  }

  compile(view: GatewayView): CompiledRoutes {
    const hosts = this.#index.update(view);
    const limit = Math.floor(view.ingresses.length * this.#maxShare);
    const ids = this.#table === undefined ? undefined : closeOver(this.#index, hosts, limit);
    if (this.#table === undefined || ids === undefined) this.#full(view);
    else this.#partial(view, this.#table, { hosts, ids });
    return { table: this.#table as RouteTable, problems: [...this.#problems.values()].flat() };
  }

  #full(view: GatewayView): void {
    const compiled = this.#compile(view);
    this.lastMode = "full";
    this.lastRecompiled = view.ingresses.length;
    this.#table = withBackendStats(compiled.table);
    this.#problems = problemsById(compiled.problems);
  }

  #partial(
    view: GatewayView,
    previous: RouteTable,
    work: { hosts: Set<string>; ids: Set<string> },
  ): void {
    const { hosts, ids } = work;
    const compiled = this.#compile(subView(view, this.#index, ids));
    const problems = this.#problems;
    for (const id of problems.keys()) if (!this.#index.ingresses.has(id)) problems.delete(id);
    for (const id of ids) problems.delete(id);
    for (const [id, list] of problemsById(compiled.problems)) problems.set(id, list);
    this.lastMode = "incremental";
    this.lastRecompiled = ids.size;
    this.#table = mergeTables(previous, compiled.table, hosts);
  }
}
