// The compiled, immutable routing table and the lookups the request path makes. Built once per
// view by compile.ts; a request only does Map lookups and a short scan of one host's prefixes.
import type { BasicAuthPolicy } from "../policy/basic-auth";
import type { ExternalAuth } from "../policy/external-auth";
import type {
  Bandwidth,
  CorsConfig,
  IngressAnnotations,
  RewriteConfig,
  RobotsConfig,
  SourceRangeConfig,
  UrlRedirect,
} from "../../core/annotations";
import type { RouteAffinity } from "../policy/affinity";
import type { CanaryContext, CanaryGroup } from "../policy/canary";
import type { ErrorPages } from "../policy/error-pages";
import type { Limits } from "../policy/limits";
import type { HeaderEdits, HeaderPair, OwnAnswer } from "../policy/head-edits";
import { MAX_MATCH_STEPS, matchSteps, type LinearPattern } from "../../core/patterns/linear-regex";
import type { UpstreamPolicy } from "./upstream";
import { EWMA_STATS, HashChooser, type Balance } from "./balance";

export type PathKind = "Exact" | "Prefix";

/** One upstream address: a ready endpoint of a Service port. */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
  /** "address:port" ("[v6]:port" for IPv6), the key of its keep-alive pool. */
  readonly key: string;
}

/** A Service port and its ready endpoints, shared by every route that names it. */
export class Backend {
  /** Round-robin position; the only mutable field of a compiled table. */
  private next = 0;
  private serviceName: string | undefined = undefined;

  constructor(
    /** "namespace/service:port". */
    readonly key: string,
    readonly endpoints: readonly Endpoint[],
  ) {}

  /** "namespace/service" (the metrics' service label), worked out once. */
  get service(): string {
    if (this.serviceName === undefined) {
      const colon = this.key.lastIndexOf(":");
      this.serviceName = colon < 0 ? this.key : this.key.slice(0, colon);
    }
    return this.serviceName;
  }

  /** The next endpoint in round-robin order, skipping `avoid` when there is another. */
  pick(avoid?: Endpoint): Endpoint | undefined {
    const count = this.endpoints.length;
    if (count === 0) return undefined;
    let index = this.next;
    this.next = index + 1 >= count ? 0 : index + 1;
    let endpoint = this.endpoints[index];
    if (endpoint === avoid && count > 1) {
      index = this.next;
      this.next = index + 1 >= count ? 0 : index + 1;
      endpoint = this.endpoints[index];
    }
    return endpoint;
  }

  /**
   * The endpoint for a route's balance (round-robin when undefined): `key` is the request's hash
   * key for a hashing route; a retry avoids `avoid` when there is another endpoint.
   */
  pickBy(balance: Balance | undefined, key: string, avoid?: Endpoint): Endpoint | undefined {
    if (balance === undefined) return this.pick(avoid);
    const avoidIndex = avoid === undefined ? -1 : this.endpoints.indexOf(avoid);
    const index =
      balance.kind === "ewma"
        ? this.chooseEwma(avoidIndex)
        : this.chooser(balance.subsetSize).choose(key, avoidIndex);
    return this.endpoints[index];
  }

  /** Endpoint keys, and the hash choosers built from them (endpoints never change in a table). */
  private keys: readonly string[] | undefined = undefined;
  private choosers: Map<number, HashChooser> | undefined = undefined;
  private seeded = false;

  private endpointKeys(): readonly string[] {
    return (this.keys ??= this.endpoints.map(endpoint => endpoint.key));
  }

  private chooseEwma(avoid: number): number {
    if (!this.seeded) {
      this.seeded = true;
      EWMA_STATS.seed(this.endpointKeys());
    }
    return EWMA_STATS.choose(this.endpointKeys(), avoid);
  }

  private chooser(subsetSize: number | undefined): HashChooser {
    this.choosers ??= new Map();
    const size = subsetSize ?? 0;
    let chooser = this.choosers.get(size);
    if (chooser === undefined) {
      chooser = new HashChooser(this.endpointKeys(), subsetSize);
      this.choosers.set(size, chooser);
    }
    return chooser;
  }
}

/** A canary's backend and its Tengine "dyeing" actions, as edits ready to apply. */
export interface CanaryTarget {
  readonly route: Route;
  readonly request: HeaderEdits;
  readonly query: readonly HeaderPair[];
  readonly response: HeaderEdits;
}

export interface TrafficPolicy {
  /** Why the route's Ingress is not served: every request gets a 503 and nothing else applies. */
  readonly refusal: string | undefined;
  /** The refusal's answer when it is not that 503 (a path too costly to route: 414). */
  readonly refusalAnswer?: OwnAnswer | undefined;
  readonly group: CanaryGroup | undefined;
  readonly targets: ReadonlyMap<string, CanaryTarget>;
  /** Which canaries have a ready endpoint in this table, and the random source. */
  readonly canaryContext: CanaryContext;
  readonly cors: CorsConfig | undefined;
  readonly robots: RobotsConfig | undefined;
  /** Whether a plain-HTTP request is redirected (ssl-redirect, force-ssl-redirect). */
  readonly redirectHttp: boolean;
  readonly redirectPort: number;
  readonly rewrite: { config: RewriteConfig; pattern: LinearPattern } | undefined;
  /** The main Ingress's allow/deny lists (its canaries' are ignored, as in ingress-nginx). */
  readonly sourceRange: SourceRangeConfig | undefined;
  /** limit-rps, limit-rpm, limit-connections: the Ingress's counts per client address. */
  readonly limits: Limits | undefined;
  /** app-root: where a request for exactly "/" is sent (302). */
  readonly appRoot: string | undefined;
  /** permanent-redirect or temporal-redirect: every request is sent there. */
  readonly redirect: UrlRedirect | undefined;
  /** custom-http-errors: backend answers replaced by default-backend's (or the gateway's own). */
  readonly errorPages: ErrorPages | undefined;
  /** default-backend's route: it serves when the route's own Service has no ready endpoint. */
  readonly defaultBackend: Route | undefined;
  /** from-to-www-redirect: this route only redirects to the same request on this host (308). */
  readonly wwwRedirect: string | undefined;
  /** The route or one of its canaries hashes requests (upstream-hash-by): plans carry its key. */
  readonly hashed: boolean;
  /** The route or one of its canaries has cookie affinity: plans carry the sticky choice. */
  readonly sticky?: boolean;
  /** auth-type: basic: the main Ingress's users (its canaries' are ignored, as in ingress-nginx). */
  readonly basicAuth?: BasicAuthPolicy | undefined;
  /** auth-url: every request it proxies is first asked of the auth server (external-auth.ts). */
  readonly auth?: ExternalAuth | undefined;
}

/** Per-route proxy settings, from the ingress's annotations with ingress-nginx's defaults. */
export interface RoutePolicy {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly sendTimeoutMs: number;
  /** Largest request body in bytes; undefined for no limit. */
  readonly bodyLimit: number | undefined;
  /** Endpoints a request may be tried on (connect failures of idempotent requests). */
  readonly tries: number;
  /**
   * TLS towards the backend and request header edits (upstream.ts); undefined for plain HTTP
   * without edits, so those routes' requests check one field and nothing more.
   */
  readonly upstream: UpstreamPolicy | undefined;
  /** load-balance ewma or upstream-hash-by; undefined: round-robin, nothing per request. */
  readonly balance?: Balance | undefined;
  /**
   * limit-rate: each response body paced to the client. Its requests take Node's path (the fast
   * path hands the connection over), where the body passes through a pacing stream.
   */
  readonly bandwidth?: Bandwidth | undefined;
  /** affinity: cookie; it chooses the endpoint, before `balance` (balancer.lua). */
  readonly affinity?: RouteAffinity | undefined;
  /** auth-type: basic with its Secret's users; undefined: no authentication. */
  readonly basicAuth?: BasicAuthPolicy | undefined;
}

export interface Route {
  /** "namespace/name" of the Ingress that defined it. */
  readonly ingress: string;
  /** The rule's host as written ("" for a rule without host or a default backend). */
  readonly host: string;
  /** The path as written ("/" for a default backend). */
  readonly path: string;
  readonly kind: PathKind;
  /** The path compared against requests: Prefix paths without trailing slashes ("" for "/"). */
  readonly match: string;
  readonly backend: Backend;
  readonly policy: RoutePolicy;
  /** The ingress's parsed annotations, for the traffic policy; undefined when they did not parse. */
  readonly annotations: IngressAnnotations | undefined;
  /**
   * Canary ingresses' routes for the same host, path and type, oldest first (ingress-nginx's
   * `canary: "true"`), at most the configured cap; `traffic` decides between them.
   */
  readonly canaries: readonly Route[];
  /** Why its Ingress is not served: the route holds its place and answers 503. */
  readonly refusal: string | undefined;
  /**
   * The compiled traffic policy (canary, CORS, robots, ssl-redirect, rewrite); undefined when the
   * route has none, so its requests skip the policy. Set once while the table is compiled.
   */
  traffic: TrafficPolicy | undefined;
}

/** A route whose path is a regular expression (use-regex, rewrite-target), as ingress-nginx's `location ~*`. */
export interface RegexRoute {
  readonly pattern: LinearPattern;
  readonly route: Route;
}

/** The routes of one host (or of rules without host). */
export interface HostRoutes {
  readonly exact: ReadonlyMap<string, Route> | undefined;
  /**
   * When one of the host's ingresses uses regex paths, every non-Exact path of the host is a
   * regex, tried longest path first, as ingress-nginx does; `prefixes` is empty then.
   */
  readonly regex: readonly RegexRoute[] | undefined;
  /** Prefix routes, longest `match` first. */
  readonly prefixes: readonly Route[];
  /** The owning ingress's spec.defaultBackend, for paths no rule matches. */
  readonly fallback: Route | undefined;
  /**
   * On a regex host, what answers a path whose matching would cost more than MAX_MATCH_STEPS (a
   * 414): never a route further down the list, which may guard less.
   */
  readonly tooCostly?: Route | undefined;
}

export interface RouteTableStats {
  hosts: number;
  wildcardHosts: number;
  routes: number;
  backends: number;
  endpoints: number;
}

export interface RouteTable {
  readonly version: number;
  readonly exactHosts: ReadonlyMap<string, HostRoutes>;
  /** Keyed by the domain after "*." ("example.com" for "*.example.com"). */
  readonly wildcardHosts: ReadonlyMap<string, HostRoutes>;
  /** Rules without host: match any host not named by a rule. */
  readonly anyHost: HostRoutes | undefined;
  readonly stats: RouteTableStats;
}

/** The host part of a Host header (or :authority), lowercased, without port. */
export function normalizeHost(header: string | undefined): string {
  if (header === undefined || header.length === 0) return "";
  let end = header.length;
  if (header.charCodeAt(0) === 91 /* [ */) {
    const close = header.indexOf("]");
    end = close < 0 ? end : close + 1;
  } else {
    const colon = header.indexOf(":");
    if (colon >= 0) end = colon;
  }
  let host = end === header.length ? header : header.slice(0, end);
  if (host.charCodeAt(host.length - 1) === 46 /* . */) host = host.slice(0, -1);
  return hasUpper(host) ? host.toLowerCase() : host;
}

function hasUpper(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) return true;
  }
  return false;
}

/** The routes for a normalized host: exact host, then one-label wildcard, then rules without host. */
export function findHost(table: RouteTable, host: string): HostRoutes | undefined {
  const exact = table.exactHosts.get(host);
  if (exact !== undefined) return exact;
  if (table.wildcardHosts.size > 0) {
    const dot = host.indexOf(".");
    if (dot > 0) {
      const wildcard = table.wildcardHosts.get(host.slice(dot + 1));
      if (wildcard !== undefined) return wildcard;
    }
  }
  return table.anyHost;
}

/** Whether `path` is `match` or continues it with a "/" (element-wise prefix). */
function prefixMatches(match: string, path: string): boolean {
  if (match.length === 0) return true;
  if (!path.startsWith(match)) return false;
  return path.length === match.length || path.charCodeAt(match.length) === 47; /* / */
}

/** The route for a path (without query) among one host's routes. */
export function findPath(routes: HostRoutes, path: string): Route | undefined {
  const exact = routes.exact?.get(path);
  if (exact !== undefined) return exact;
  if (routes.regex !== undefined) {
    const found = findRegex(routes.regex, path);
    return found === TOO_COSTLY ? routes.tooCostly : (found ?? routes.fallback);
  }
  const prefixes = routes.prefixes;
  for (let i = 0; i < prefixes.length; i++) {
    const route = prefixes[i]!;
    if (prefixMatches(route.match, path)) return route;
  }
  return routes.fallback;
}

const TOO_COSTLY = Symbol("too costly");

function findRegex(
  regex: readonly RegexRoute[],
  path: string,
): Route | undefined | typeof TOO_COSTLY {
  let steps = 0;
  for (let i = 0; i < regex.length; i++) {
    const candidate = regex[i]!;
    steps += matchSteps(candidate.pattern, path);
    if (steps > MAX_MATCH_STEPS) return TOO_COSTLY;
    if (candidate.pattern.test(path)) return candidate.route;
  }
  return undefined;
}

/** The route for a request: host header and request target (the query is ignored). */
export function findRoute(
  table: RouteTable,
  hostHeader: string | undefined,
  target: string,
): Route | undefined {
  const routes = findHost(table, normalizeHost(hostHeader));
  if (routes === undefined) return undefined;
  const query = target.indexOf("?");
  return findPath(routes, query < 0 ? target : target.slice(0, query));
}

/** Every route of one host (its fallback included). */
export function forEachHostRoute(routes: HostRoutes, visit: (route: Route) => void): void {
  for (const route of routes.exact?.values() ?? []) visit(route);
  for (const route of routes.prefixes) visit(route);
  for (const { route } of routes.regex ?? []) visit(route);
  if (routes.fallback !== undefined) visit(routes.fallback);
}

/** Every route of a table, each once per host that holds it (fallbacks included). */
export function forEachRoute(table: RouteTable, visit: (route: Route) => void): void {
  for (const routes of table.exactHosts.values()) forEachHostRoute(routes, visit);
  for (const routes of table.wildcardHosts.values()) forEachHostRoute(routes, visit);
  if (table.anyHost !== undefined) forEachHostRoute(table.anyHost, visit);
}
