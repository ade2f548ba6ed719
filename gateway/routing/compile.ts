// GatewayView → immutable RouteTable. Pure: no I/O, no clock. Ingresses are taken oldest first
// (creationTimestamp, then namespace/name, as ingress-nginx does), so when two claim the same host,
// path and path type the older one serves and the newer one is reported as a problem.
import type {
  V1HTTPIngressPath,
  V1Ingress,
  V1IngressBackend,
  V1IngressRule,
} from "@kubernetes/client-node";
import {
  INGRESS_NGINX_PROXY_DEFAULTS,
  isCanaryIngress,
  parseIngressAnnotations,
  referrerAllowed,
  referrerAllowList,
  type IngressAnnotations,
  type LoadBalancingConfig,
  type ProxyConfig,
} from "../../core/annotations";
import { securityErrors } from "../../core/ingress/review-ingress";
import { hostProblem } from "../../core/ingress/hostname";
import { BULWARK_INGRESS_ANNOTATION_PREFIX, NGINX_ANNOTATION_PREFIX } from "../../core/names";
import { formatErrors, quote } from "../../core/result";
import { isSlash, trimEndWhere } from "../../core/trim";
import {
  MAX_INGRESS_PATTERN_INSTRUCTIONS,
  PathPatternBudget,
  type LinearPattern,
} from "../../core/patterns/linear-regex";
import { canaryAffinity, routeAffinity } from "../policy/affinity";
import { ROBOTS_PATH } from "../policy/host-rules";
import {
  compileTraffic,
  refusedPolicy,
  tooCostlyPolicy,
  DEFAULT_TRAFFIC_OPTIONS,
  type TrafficOptions,
} from "../policy/route-traffic";
import type { AuthSecret, GatewayView, TlsPair } from "../view";
import { compileUpstream } from "./upstream";
import { compileBasicAuth } from "../policy/basic-auth";
import type { Balance } from "./balance";
import { EndpointIndex } from "./endpoints";
import { ExtraNames } from "./extra-names";
import {
  Backend,
  type HostRoutes,
  type PathKind,
  type RegexRoute,
  type Route,
  type RoutePolicy,
  type RouteTable,
} from "./table";
import { objectKey } from "../../core/object-key";

export interface CompileOptions {
  /** Canary ingresses per host/path beyond which the newer ones are left out (Tengine's max-canary-ing-num). */
  maxCanaries: number;
  /** Tengine-Ingress's canary-referrer allow-list, as split (referrerAllowList); absent: [""]. */
  canaryReferrers?: readonly string[];
  traffic: TrafficOptions;
}

/** Tengine-Ingress's code default for max-canary-ing-num. */
export const DEFAULT_MAX_CANARIES = 20;

export const DEFAULT_COMPILE_OPTIONS: CompileOptions = {
  maxCanaries: DEFAULT_MAX_CANARIES,
  traffic: DEFAULT_TRAFFIC_OPTIONS,
};

export interface CompiledRoutes {
  table: RouteTable;
  /** "namespace/name: field: message" for every rule or backend left out. */
  problems: string[];
}

const SECOND = 1000;
const OVER_INGRESS_BUDGET = `would bring its Ingress's regular expressions past ${MAX_INGRESS_PATTERN_INSTRUCTIONS} RE2 instructions together`;

export const DEFAULT_POLICY: RoutePolicy = Object.freeze({
  connectTimeoutMs: INGRESS_NGINX_PROXY_DEFAULTS.connectTimeoutSeconds * SECOND,
  readTimeoutMs: INGRESS_NGINX_PROXY_DEFAULTS.readTimeoutSeconds * SECOND,
  sendTimeoutMs: INGRESS_NGINX_PROXY_DEFAULTS.sendTimeoutSeconds * SECOND,
  bodyLimit: undefined,
  tries: INGRESS_NGINX_PROXY_DEFAULTS.nextUpstreamTries,
  upstream: undefined,
});

/** Route policy from the proxy annotations; unset fields take ingress-nginx's defaults. */
export function policyOf(proxy: ProxyConfig | undefined): RoutePolicy {
  if (proxy === undefined) return DEFAULT_POLICY;
  const seconds = (value: number | undefined, fallback: number) =>
    value === undefined ? fallback : value * SECOND;
  return {
    connectTimeoutMs: seconds(proxy.connectTimeoutSeconds, DEFAULT_POLICY.connectTimeoutMs),
    readTimeoutMs: seconds(proxy.readTimeoutSeconds, DEFAULT_POLICY.readTimeoutMs),
    sendTimeoutMs: seconds(proxy.sendTimeoutSeconds, DEFAULT_POLICY.sendTimeoutMs),
    bodyLimit: typeof proxy.bodySize === "number" ? proxy.bodySize : undefined,
    // 0 means "no limit": every endpoint may be tried.
    tries:
      proxy.nextUpstreamTries === 0
        ? Number.MAX_SAFE_INTEGER
        : (proxy.nextUpstreamTries ?? DEFAULT_POLICY.tries),
    upstream: undefined,
  };
}

/** The route's balance: upstream-hash-by first, as balancer.lua's get_implementation; then ewma. */
export function balanceOf(config: LoadBalancingConfig | undefined): Balance | undefined {
  if (config?.hashBy !== undefined) {
    return { kind: "hash", by: config.hashBy, subsetSize: config.subsetSize };
  }
  return config?.loadBalance === "ewma" ? { kind: "ewma" } : undefined;
}

/** The route policy an Ingress's annotations make: proxy settings, balance, limit-rate, affinity. */
function annotatedPolicy(annotations: IngressAnnotations, ingress: V1Ingress): RoutePolicy {
  const base = policyOf(annotations.proxy);
  const optional: Partial<RoutePolicy> = {
    balance: balanceOf(annotations.balancing),
    bandwidth: annotations.rateLimit?.bandwidth,
    affinity: routeAffinity(annotations.affinity, ingress),
  };
  const set = Object.entries(optional).filter(([, value]) => value !== undefined);
  // Most routes set none: they keep sharing policyOf's object.
  return set.length === 0
    ? base
    : { ...base, ...(Object.fromEntries(set) as Partial<RoutePolicy>) };
}

function creationMs(ingress: V1Ingress): number {
  const stamp = ingress.metadata?.creationTimestamp as Date | string | undefined;
  if (stamp === undefined) return Number.POSITIVE_INFINITY;
  const ms = typeof stamp === "string" ? Date.parse(stamp) : stamp.getTime();
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** Oldest first, then namespace/name: the order that decides conflicts. */
export function sortIngresses(ingresses: readonly V1Ingress[]): V1Ingress[] {
  const keyed = ingresses.map(ingress => ({
    ingress,
    ms: creationMs(ingress),
    id: objectKey(ingress),
  }));
  keyed.sort((a, b) => a.ms - b.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return keyed.map(k => k.ingress);
}

/** Mutable per-host collection while compiling. */
class HostBuilder {
  readonly exact = new Map<string, Route>();
  readonly prefix = new Map<string, Route>();
  /** Paths of ingresses with regex paths, keyed as written. */
  readonly regex = new Map<string, Route>();
  fallback: Route | undefined;

  /**
   * `patternOf`: a path as a regex, or why it is none; `unplaced`: a route left out because its
   * path is none.
   */
  build(
    patternOf: (route: Route) => LinearPattern | string,
    unplaced: (route: Route, why: string) => void,
  ): HostRoutes {
    const exact = this.exact.size > 0 ? this.exact : undefined;
    if (this.regex.size > 0) {
      // ingress-nginx: one regex path on a host makes all its paths regexes, longest first. A
      // prefix path of another Ingress that is no valid regex (as nginx would refuse the whole
      // configuration) is left out, reported, not allowed to stop every host's routes.
      const all = [...this.regex.values(), ...this.prefix.values()];
      all.sort((a, b) => b.path.length - a.path.length);
      const regex: RegexRoute[] = [];
      for (const route of all) {
        const pattern = patternOf(route);
        if (typeof pattern === "string") unplaced(route, pattern);
        else regex.push({ pattern, route });
      }
      return { exact, regex, prefixes: [], fallback: this.fallback };
    }
    const prefixes = [...this.prefix.values()].sort((a, b) => b.match.length - a.match.length);
    return { exact, regex: undefined, prefixes, fallback: this.fallback };
  }
}

interface IngressContext {
  id: string;
  namespace: string;
  /** Why the Ingress is not served (its routes answer 503 where they stand); undefined: served. */
  refusal: string | undefined;
  policy: RoutePolicy;
  annotations: IngressAnnotations | undefined;
  /** Hosts the ingress has TLS for ("*" when a TLS entry names none: every host of the ingress). */
  tlsHosts: ReadonlySet<string>;
  /** The ingress's spec.defaultBackend route, for its hosts' unmatched paths. */
  fallback?: Route | undefined;
  /** What its regex paths may still compile to (a refused Ingress's too: they keep their place). */
  patterns: PathPatternBudget;
}

class Compiler {
  readonly problems: string[] = [];
  private readonly exactHosts = new Map<string, HostBuilder>();
  private readonly wildcardHosts = new Map<string, HostBuilder>();
  private readonly anyHost = new HostBuilder();
  private defaultRoute: Route | undefined;
  private routeCount = 0;
  private readonly canaryIngresses: { context: IngressContext; ingress: V1Ingress }[] = [];
  private readonly mains: Route[] = [];
  /**
   * Hosts that some Ingress (any of them: a host is one server) lists in spec.tls: ingress-nginx
   * redirects every path of such a host (ssl-redirect defaults to true) unless the path's own
   * Ingress turns it off.
   */
  private readonly certified = new Set<string>();
  private readonly canaryReferrers: ReadonlySet<string>;
  readonly names = new ExtraNames();
  /** The view's auth-secret Secrets by namespace/name. */
  authSecrets: ReadonlyMap<string, AuthSecret> = new Map();
  /** Each path compiled as a regex once per compile: the pattern, or why it is none. */
  private readonly patterns = new Map<string, LinearPattern | string>();
  /** Each Ingress's regex budget, by its id (a route's `ingress`). */
  private readonly budgets = new Map<string, PathPatternBudget>();

  constructor(
    private readonly endpoints: EndpointIndex,
    private readonly options: CompileOptions,
    private readonly refused: Readonly<Record<string, string>> = {},
    private readonly pairs: ReadonlyMap<string, TlsPair> = new Map(),
  ) {
    this.canaryReferrers = new Set(options.canaryReferrers ?? referrerAllowList(undefined));
  }

  addIngress(ingress: V1Ingress): void {
    const context = this.contextOf(ingress);
    this.certify(context, ingress);
    // Decided on the canary annotation alone: a canary that fails its review is served as
    // nothing, never as a main that would take the path from the real one.
    if (isCanaryIngress(ingress.metadata?.annotations)) {
      const refusal = context.refusal ?? this.canaryReferrerRefusal(context);
      if (refusal === undefined) this.canaryIngresses.push({ context, ingress });
      else this.problem(context, "metadata", `canary not served: ${refusal}`);
      return;
    }
    if (context.refusal !== undefined)
      this.problem(context, "metadata", `not served (503): ${context.refusal}`);
    const spec = ingress.spec;
    const fallback =
      spec?.defaultBackend === undefined
        ? undefined
        : this.route(
            context,
            { host: "", path: "/", kind: "Prefix" },
            spec.defaultBackend,
            "spec.defaultBackend",
          );
    if (fallback !== undefined) {
      this.claimDefault(context, fallback);
      this.mains.push(fallback);
    }
    context.fallback = fallback;
    for (const [r, rule] of (spec?.rules ?? []).entries())
      this.addRule(context, rule, `spec.rules[${r}]`);
  }

  private addRule(context: IngressContext, rule: V1IngressRule, field: string): void {
    const host = rule.host ?? "";
    const problem = host === "" ? undefined : hostProblem(host);
    if (problem !== undefined) {
      this.problem(context, `${field}.host`, `"${host}" ${problem}`);
      return;
    }
    const builder = this.hostBuilder(host);
    this.names.note(context, host);
    if (context.fallback !== undefined && builder.fallback === undefined)
      builder.fallback = context.fallback;
    for (const [p, path] of (rule.http?.paths ?? []).entries()) {
      this.addPath(context, { builder, host }, path, `${field}.http.paths[${p}]`);
    }
    this.addRobots(context, { builder, host }, rule);
  }

  /**
   * Tengine's disable-robots serves /robots.txt for the whole host: an Exact route for it, so
   * it answers whichever of the ingress's paths would have matched.
   */
  private addRobots(
    context: IngressContext,
    { builder, host }: { builder: HostBuilder; host: string },
    rule: V1IngressRule,
  ): void {
    if (context.annotations?.robots?.disableRobots !== true) return;
    const backend = rule.http?.paths?.[0]?.backend;
    if (backend === undefined || builder.exact.has(ROBOTS_PATH)) return;
    const where = { host, path: ROBOTS_PATH, kind: "Exact" as const };
    const route = this.route(context, where, backend, "spec.rules");
    if (route === undefined) return;
    builder.exact.set(ROBOTS_PATH, route);
    this.mains.push(route);
  }

  /**
   * Compiles every main route's traffic policy, once its canaries are attached. A policy that
   * throws (a check missed upstream) refuses its route, 503, not every host's: the route's
   * policy may be what guards it, so it is never served without one.
   */
  compileTraffic(): void {
    for (const route of this.mains) {
      const certified = this.certified.has(route.host);
      try {
        const fallback = this.defaultBackendOf(route);
        route.traffic = compileTraffic(route, certified, this.options.traffic, fallback);
      } catch (error) {
        const why = `its traffic policy did not compile: ${error instanceof Error ? error.message : String(error)}`;
        route.traffic = refusedPolicy(why, this.options.traffic);
        this.problems.push(
          `${route.ingress}: host ${quote(route.host)} path ${quote(route.path)} answers 503: ${why}`,
        );
      }
    }
  }

  /**
   * The route of its Ingress's default-backend Service, on the Service's first port as
   * ingress-nginx does; none while the Service is not in the view.
   */
  private defaultBackendOf(main: Route): Route | undefined {
    const service = main.annotations?.errorPages?.defaultBackend;
    if (service === undefined) return undefined;
    const namespace = main.ingress.slice(0, main.ingress.indexOf("/"));
    const port = this.endpoints.firstPort(namespace, service);
    if (port === undefined) return undefined;
    const backend = this.endpoints.backend({ namespace, service, port: { number: port } });
    return { ...main, backend, annotations: undefined, canaries: [], traffic: undefined };
  }

  /** Tengine's verifyCanaryReferrer: a canary naming a referrer outside the list is ignored. */
  private canaryReferrerRefusal(context: IngressContext): string | undefined {
    const referrer = context.annotations?.referrer?.canaryReferrer;
    if (referrerAllowed(referrer, this.canaryReferrers)) return undefined;
    return `canary-referrer ${JSON.stringify(referrer)} is not in BULWARK_CANARY_REFERRERS`;
  }

  private certify(context: IngressContext, ingress: V1Ingress): void {
    const hosts = (ingress.spec?.rules ?? []).map(rule => rule.host ?? "");
    if (ingress.spec?.defaultBackend !== undefined) hosts.push("");
    for (const host of hosts) if (hasTls(context, host)) this.certified.add(host);
  }

  /** Attaches each canary ingress's paths to the main routes they shadow (after all mains). */
  attachCanaries(): void {
    for (const { context, ingress } of this.canaryIngresses) {
      for (const [r, rule] of (ingress.spec?.rules ?? []).entries()) {
        for (const [p, path] of (rule.http?.paths ?? []).entries()) {
          this.attachCanary(context, rule.host ?? "", path, `spec.rules[${r}].http.paths[${p}]`);
        }
      }
    }
  }

  private attachCanary(
    context: IngressContext,
    host: string,
    path: V1HTTPIngressPath,
    field: string,
  ): void {
    const kind = pathKindOf(path.pathType);
    const value = path.path ?? "/";
    const main = kind === undefined ? undefined : this.mainRoute(host, value, kind);
    const canary =
      kind === undefined
        ? undefined
        : this.route(context, { host, path: value, kind }, path.backend, `${field}.backend`);
    if (main === undefined || canary === undefined) {
      this.problem(
        context,
        field,
        `canary for host "${host}" path "${value}" has no main ingress with the same host, path and pathType; ignored`,
      );
      return;
    }
    if (main.canaries.length >= this.options.maxCanaries) {
      this.problem(
        context,
        field,
        `host "${host}" path "${value}" already has ${this.options.maxCanaries} canaries (the cap); ignored`,
      );
      return;
    }
    // ingress-nginx: a canary's other annotations are ignored, its main's apply (timeouts,
    // body size, retries); where it sends the request and how it balances (load-balance,
    // upstream-hash-by) are its own.
    // Its affinity is its main's unless it asks for the legacy behaviour (canaryAffinity).
    const affinity = canaryAffinity(main, canary);
    const policy = { ...main.policy, balance: canary.policy.balance, affinity };
    (main.canaries as Route[]).push({ ...canary, policy });
  }

  private buildHost(host: string, builder: HostBuilder): HostRoutes {
    const routes = this.placeHost(host, builder);
    return routes.regex === undefined ? routes : { ...routes, tooCostly: this.tooCostly(host) };
  }

  /** What answers a path too costly for the host's regex routes: a 414, no backend. */
  private tooCostly(host: string): Route {
    return {
      ingress: "",
      host,
      path: "",
      kind: "Prefix",
      match: "",
      backend: new Backend(`${host} (path too costly)`, []),
      policy: DEFAULT_POLICY,
      annotations: undefined,
      canaries: [],
      refusal: undefined,
      traffic: tooCostlyPolicy(host, this.options.traffic),
    };
  }

  private placeHost(host: string, builder: HostBuilder): HostRoutes {
    return builder.build(
      route => this.patternOf(route),
      (route, why) => {
        this.routeCount--; // counted when placed; not served
        this.problems.push(
          `${route.ingress}: path ${quote(route.path)} is not served on host "${host}": another Ingress makes the host's paths regular expressions (use-regex), and as one it ${why}`,
        );
      },
    );
  }

  /**
   * A path as a regex, compiled once per compile and charged to its own Ingress's budget: a
   * tenant's plain prefix paths on another's regex host cost no more than regex paths would.
   */
  private patternOf(route: Route): LinearPattern | string {
    const found = this.patterns.get(route.path);
    if (found !== undefined) return found;
    const admitted = (this.budgets.get(route.ingress) ?? new PathPatternBudget()).admit(route.path);
    if (admitted.spent) return OVER_INGRESS_BUDGET;
    const check = admitted.check;
    const verdict = check.ok
      ? check.pattern
      : check.tooLarge
        ? check.problem
        : `is not valid RE2 (${check.problem})`;
    // What the path is, for every Ingress; the budget only this one's.
    this.patterns.set(route.path, verdict);
    return admitted.crossed ? OVER_INGRESS_BUDGET : verdict;
  }

  /** The route a main ingress made for this host, path and type, if any. */
  private mainRoute(host: string, path: string, kind: PathKind): Route | undefined {
    let builder: HostBuilder | undefined = this.anyHost;
    if (host.startsWith("*.")) builder = this.wildcardHosts.get(host.slice(2));
    else if (host !== "") builder = this.exactHosts.get(host);
    if (kind === "Exact") return builder?.exact.get(path);
    return builder?.prefix.get(trimTrailingSlashes(path)) ?? builder?.regex.get(path);
  }

  build(version: number): RouteTable {
    const finish = (builders: Map<string, HostBuilder>) => {
      const built = new Map<string, HostRoutes>();
      for (const [host, builder] of builders) built.set(host, this.buildHost(host, builder));
      return built;
    };
    if (this.anyHost.fallback === undefined) this.anyHost.fallback = this.defaultRoute;
    const any = this.buildHost("", this.anyHost);
    const hasAny = any.exact !== undefined || any.prefixes.length > 0 || any.fallback !== undefined;
    const exactHosts = finish(this.exactHosts);
    const wildcardHosts = finish(this.wildcardHosts);
    const extra = this.names.place({ exactHosts, wildcardHosts }, this.options.traffic);
    this.routeCount += extra.redirects;
    for (const problem of extra.problems) this.problems.push(problem);
    return {
      version,
      exactHosts,
      wildcardHosts,
      anyHost: hasAny ? any : undefined,
      stats: {
        hosts: exactHosts.size,
        wildcardHosts: wildcardHosts.size,
        routes: this.routeCount,
        backends: this.endpoints.backendCount,
        endpoints: this.endpoints.endpointCount,
      },
    };
  }

  private contextOf(ingress: V1Ingress): IngressContext {
    const id = objectKey(ingress);
    const annotations = ingress.metadata?.annotations;
    const context: IngressContext = {
      id,
      namespace: ingress.metadata?.namespace ?? "",
      // The control side's review (selection/verdicts.ts); the checks below also hold for a
      // view without one, such as a saved view from an older version.
      refusal: this.refused[id] ?? securityRefusal(annotations),
      policy: DEFAULT_POLICY,
      annotations: undefined,
      tlsHosts: tlsHostsOf(ingress),
      patterns: new PathPatternBudget(),
    };
    this.budgets.set(id, context.patterns);
    if (annotations === undefined || !hasOurAnnotation(annotations)) return context;
    const parsed = parseIngressAnnotations(annotations);
    if (parsed.ok) {
      context.annotations = parsed.value;
      context.policy = annotatedPolicy(parsed.value, ingress);
      this.addUpstream(context, parsed.value);
      this.addBasicAuth(context, parsed.value);
      return context;
    }
    context.refusal ??= `metadata.annotations: ${formatErrors(parsed.errors)}`;
    return context;
  }

  /** The upstream TLS and header settings; a Secret that cannot be used refuses the Ingress (503). */
  private addUpstream(context: IngressContext, annotations: IngressAnnotations): void {
    if (annotations.upstream === undefined) return;
    const outcome = compileUpstream({
      config: annotations.upstream,
      namespace: context.namespace,
      rewrites: annotations.rewrite?.target !== undefined,
      pairs: this.pairs,
    });
    if (outcome.ok) context.policy = { ...context.policy, upstream: outcome.upstream };
    else context.refusal ??= outcome.refusal;
  }

  /** auth-type: basic with its Secret's users; a Secret that cannot be used refuses the Ingress (503). */
  private addBasicAuth(context: IngressContext, annotations: IngressAnnotations): void {
    if (annotations.basicAuth === undefined) return;
    const outcome = compileBasicAuth(annotations.basicAuth, context.namespace, this.authSecrets);
    if (outcome.ok) context.policy = { ...context.policy, basicAuth: outcome.policy };
    else context.refusal ??= outcome.refusal;
  }

  private hostBuilder(host: string): HostBuilder {
    if (host === "") return this.anyHost;
    const wildcard = host.startsWith("*.");
    const map = wildcard ? this.wildcardHosts : this.exactHosts;
    const key = wildcard ? host.slice(2) : host;
    let builder = map.get(key);
    if (builder === undefined) {
      builder = new HostBuilder();
      map.set(key, builder);
    }
    return builder;
  }

  private addPath(
    context: IngressContext,
    { builder, host }: { builder: HostBuilder; host: string },
    path: V1HTTPIngressPath,
    field: string,
  ): void {
    const kind = pathKindOf(path.pathType);
    const value = path.path ?? "/";
    if (kind === undefined || !value.startsWith("/")) {
      const what = kind === undefined ? `pathType "${path.pathType ?? ""}"` : `path "${value}"`;
      this.problem(
        context,
        field,
        `${what} is not served (Exact, Prefix, ImplementationSpecific; paths start with "/")`,
      );
      return;
    }
    const route = this.route(
      context,
      { host, path: value, kind },
      path.backend,
      `${field}.backend`,
    );
    if (route === undefined) return;
    const slot = this.slotOf(context, builder, route);
    if (slot === undefined) {
      this.problem(
        context,
        field,
        `path ${quote(value)} is not a valid regular expression (use-regex, rewrite-target)`,
      );
      return;
    }
    const [map, key] = slot;
    const owner = map.get(key);
    if (owner !== undefined) {
      const where = `host "${host}" ${kind} path "${value}"`;
      this.problem(
        context,
        field,
        `${where} is already served by ${owner.ingress} (older); ignored`,
      );
      return;
    }
    map.set(key, route);
    this.mains.push(route);
    this.routeCount++;
  }

  /** Where a main route goes: its map and key (undefined for a regex path that does not compile). */
  private slotOf(
    context: IngressContext,
    builder: HostBuilder,
    route: Route,
  ): [Map<string, Route>, string] | undefined {
    const rewrite = context.annotations?.rewrite;
    if (route.kind === "Exact") {
      // A rewrite takes its capture groups from the path, an Exact one's too.
      const compiles = rewrite?.target === undefined || this.compilesAsRegex(context, route.path);
      return compiles ? [builder.exact, route.match] : undefined;
    }
    if (rewrite?.regexPaths !== true) return [builder.prefix, route.match];
    return this.compilesAsRegex(context, route.path) ? [builder.regex, route.path] : undefined;
  }

  /**
   * Whether a regex path of `context` compiles, within its Ingress's budget (an invalid one is the
   * Ingress's problem, which its review reports).
   */
  private compilesAsRegex(context: IngressContext, path: string): boolean {
    const admitted = context.patterns.admit(path);
    if (admitted.spent || !admitted.check.ok || admitted.crossed) return false;
    this.patterns.set(path, admitted.check.pattern);
    return true;
  }

  private claimDefault(context: IngressContext, route: Route): void {
    if (this.defaultRoute === undefined) {
      this.defaultRoute = route;
      return;
    }
    this.problem(
      context,
      "spec.defaultBackend",
      `the default backend for unknown hosts is ${this.defaultRoute.ingress}'s (older); this one serves only its own hosts`,
    );
  }

  private route(
    context: IngressContext,
    { host, path, kind }: { host: string; path: string; kind: PathKind },
    backend: V1IngressBackend | undefined,
    field: string,
  ): Route | undefined {
    const where = { host, path, kind };
    // A refused route holds its place and answers 503: no backend, no annotations read.
    if (context.refusal !== undefined) {
      const refused = new Backend(`${context.id} (refused)`, []);
      return routeAt(
        where,
        { ...context, policy: DEFAULT_POLICY, annotations: undefined },
        refused,
      );
    }
    const service = backend?.service;
    if (service?.name === undefined || service.port === undefined) {
      this.problem(context, field, "only Service backends with a port are served");
      return undefined;
    }
    const ref = { namespace: context.namespace, service: service.name, port: service.port };
    return routeAt(where, context, this.endpoints.backend(ref));
  }

  private problem(context: IngressContext, field: string, message: string): void {
    this.problems.push(`${context.id}: ${field}: ${message}`);
  }
}

function routeAt(
  { host, path, kind }: { host: string; path: string; kind: PathKind },
  context: IngressContext,
  backend: Backend,
): Route {
  return {
    ingress: context.id,
    host,
    path,
    kind,
    match: kind === "Exact" ? path : trimTrailingSlashes(path),
    backend,
    policy: context.policy,
    annotations: context.annotations,
    canaries: [],
    refusal: context.refusal,
    traffic: undefined,
  };
}

function securityRefusal(annotations: Record<string, string> | undefined): string | undefined {
  const errors = securityErrors(annotations);
  return errors.length === 0 ? undefined : formatErrors(errors);
}

function tlsHostsOf(ingress: V1Ingress): ReadonlySet<string> {
  const hosts = new Set<string>();
  for (const tls of ingress.spec?.tls ?? []) {
    if (tls.hosts === undefined || tls.hosts.length === 0) hosts.add("*");
    for (const host of tls.hosts ?? []) hosts.add(host);
  }
  return hosts;
}

function hasTls(context: IngressContext, host: string): boolean {
  return context.tlsHosts.has("*") || (host !== "" && context.tlsHosts.has(host));
}

function hasOurAnnotation(annotations: Record<string, string>): boolean {
  for (const key in annotations) {
    if (key.startsWith(NGINX_ANNOTATION_PREFIX)) return true;
    if (key.startsWith(BULWARK_INGRESS_ANNOTATION_PREFIX)) return true;
  }
  return false;
}

function pathKindOf(pathType: string | undefined): PathKind | undefined {
  if (pathType === "Exact") return "Exact";
  if (pathType === "Prefix" || pathType === "ImplementationSpecific") return "Prefix";
  return undefined;
}

/** "/foo/" and "/foo" match the same requests as a Prefix; "/" becomes "" (everything). */
function trimTrailingSlashes(path: string): string {
  return trimEndWhere(path, isSlash);
}

export function compileRoutes(
  view: GatewayView,
  options: CompileOptions = DEFAULT_COMPILE_OPTIONS,
): CompiledRoutes {
  const endpoints = new EndpointIndex(view.endpointSlices, view.services);
  const pairs = new Map(view.tlsPairs.map(pair => [`${pair.namespace}/${pair.name}`, pair]));
  const compiler = new Compiler(endpoints, options, view.refused, pairs);
  compiler.authSecrets = new Map(
    (view.authSecrets ?? []).map(s => [`${s.namespace}/${s.name}`, s]),
  );
  for (const ingress of sortIngresses(view.ingresses)) compiler.addIngress(ingress);
  compiler.attachCanaries();
  compiler.compileTraffic();
  return { table: compiler.build(view.version), problems: compiler.problems };
}
