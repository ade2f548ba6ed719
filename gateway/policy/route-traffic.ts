// The traffic policy of one route, compiled when the routing table is built, and the plan for one
// request made from it: answer here (ssl-redirect, robots, CORS preflight) or proxy to main or a
// canary with the request and response edits that go with it. A route without any of these has
// no policy at all (undefined), so its requests skip this module entirely.
import {
  sourceAllowed,
  APP_ROOT_STATUS,
  type CanaryActions,
  type CorsConfig,
  type IngressAnnotations,
  type RobotsConfig,
} from "../../core/annotations";
import { compilePathPattern, MAX_MATCH_STEPS } from "../../core/patterns/linear-regex";
import type { CanaryTarget, Route, TrafficPolicy } from "../routing/table";
import {
  canaryGroup,
  compileCanary,
  decideCanary,
  type CanaryContext,
  type CanaryDecision,
  type ValueCompare,
} from "./canary";
import { answerCors } from "./cors";
import { compileErrorPages, errorHeaders, routeHeaders, type ErrorPages } from "./error-pages";
import {
  addQuery,
  NO_EDITS,
  type HeaderEdits,
  type HeaderPair,
  type OwnAnswer,
} from "./head-edits";
import {
  DENY_ALL_ROBOTS,
  httpsLocation,
  wwwLocation,
  needsSslRedirect,
  robotsBody,
  rewriteTarget,
  SSL_REDIRECT_STATUS,
} from "./host-rules";
import { stickyCanaryDecision, stickyChoice, type StickyChoice } from "./affinity";
import { hashKey } from "./hash-key";
import { checkBasicAuth, type AuthVerdict } from "./basic-auth";
import { limitsFor, type LimitOptions } from "./limits";
import {
  compileExternalAuth,
  DEFAULT_AUTH_OPTIONS,
  SHARED_AUTH_CACHE,
  type AuthOptions,
} from "./external-auth";
import type { RequestFacts } from "./request-values";

export type Variant = "main" | "canary";

export interface TrafficOptions {
  /** The HTTPS port clients reach, for ssl-redirect's Location (ingress-nginx: 443). */
  redirectPort: number;
  /** How canary values compare: ingress-nginx exactly (default), Tengine without case. */
  compare: ValueCompare;
  /** The rate limits' status and worker share (default: 503, one worker). */
  limits?: LimitOptions;
  /** The auth request's timeouts (default: 5 s to connect, 15 s for the answer). */
  auth?: AuthOptions;
}

export const DEFAULT_TRAFFIC_OPTIONS: TrafficOptions = { redirectPort: 443, compare: "exact" };

const pairs = (actions: readonly { name: string; value: string }[]): HeaderPair[] =>
  actions.map(a => [a.name, a.value] as const);

function canaryTarget(route: Route, actions: CanaryActions): CanaryTarget {
  return {
    route,
    request: { set: pairs(actions.requestAddHeaders), add: pairs(actions.requestAppendHeaders) },
    query: pairs(actions.requestAddQuery),
    response: { set: pairs(actions.responseAddHeaders), add: pairs(actions.responseAppendHeaders) },
  };
}

function compileCanaries(main: Route, compare: ValueCompare) {
  const targets = new Map<string, CanaryTarget>();
  const ready = new Set<string>();
  const compiled = [];
  for (const canary of main.canaries) {
    const config = canary.annotations?.canary;
    if (config === undefined) continue;
    compiled.push(compileCanary(canary.ingress, config, compare));
    targets.set(canary.ingress, canaryTarget(canary, config.actions));
    if (canary.backend.endpoints.length > 0) ready.add(canary.ingress);
  }
  const group =
    compiled.length === 0
      ? undefined
      : canaryGroup(compiled, main.annotations?.canary?.weightTotal);
  return { group, targets, ready };
}

function corsOf(annotations: IngressAnnotations | undefined): CorsConfig | undefined {
  return annotations?.cors?.enabled === true ? annotations.cors : undefined;
}

function robotsOf(annotations: IngressAnnotations | undefined): RobotsConfig | undefined {
  return annotations?.robots?.disableRobots === true ? annotations.robots : undefined;
}

function rewriteOf(main: Route): TrafficPolicy["rewrite"] {
  const config = main.annotations?.rewrite;
  return config?.target === undefined
    ? undefined
    : { config, pattern: compilePathPattern(main.path) };
}

/** Whether a policy does anything a plain route would not. */
function hasEffect(policy: TrafficPolicy): boolean {
  const answers = policy.redirectHttp || policy.appRoot || policy.redirect || policy.robots;
  const edits = policy.cors || policy.rewrite || policy.group;
  return Boolean(
    answers || edits || guards(policy) || choosesEndpoint(policy) || policy.errorPages,
  );
}

/** What stands between a client and the backend: source ranges, limits, auth, the default backend. */
function guards(policy: TrafficPolicy): boolean {
  const access = policy.sourceRange || policy.limits || policy.basicAuth || policy.auth;
  return Boolean(access || policy.defaultBackend);
}

/** Whether requests need their facts read to choose an endpoint (upstream-hash-by, affinity). */
function choosesEndpoint(policy: TrafficPolicy): boolean {
  return policy.hashed || policy.sticky === true;
}

/**
 * The route's policy; undefined when no annotation of the route changes a request.
 * `defaultBackend`: the route of the Ingress's default-backend Service, when it names one.
 */
export function compileTraffic(
  main: Route,
  hostHasTls: boolean,
  options: TrafficOptions,
  defaultBackend?: Route,
): TrafficPolicy | undefined {
  if (main.refusal !== undefined) return refusedPolicy(main.refusal, options);
  const auth = authOf(main, options);
  if (typeof auth === "string") return refusedPolicy(auth, options);
  const { group, targets, ready } = compileCanaries(main, options.compare);
  const policy: TrafficPolicy = {
    refusal: undefined,
    group,
    targets,
    // Built once per table, so a decision allocates no context of its own.
    canaryContext: { available: (id: string) => ready.has(id), random: Math.random },
    ...annotationEffects(main, hostHasTls, options),
    redirectPort: options.redirectPort,
    rewrite: rewriteOf(main),
    errorPages: compileErrorPages(main, main.annotations?.errorPages?.codes ?? [], defaultBackend),
    defaultBackend,
    wwwRedirect: undefined,
    hashed: hashes(main) || main.canaries.some(hashes),
    sticky: sticks(main) || main.canaries.some(sticks),
    auth,
  };
  return hasEffect(policy) ? policy : undefined;
}

/** The main Ingress's auth-url compiled for the route; a string when the route must be refused. */
function authOf(main: Route, options: TrafficOptions) {
  const config = main.annotations?.externalAuth;
  if (config === undefined) return undefined;
  return compileExternalAuth(config, main, options.auth ?? DEFAULT_AUTH_OPTIONS, SHARED_AUTH_CACHE);
}

/** What the main Ingress's annotations make of the policy: answers, access and limits. */
function annotationEffects(main: Route, hostHasTls: boolean, options: TrafficOptions) {
  const annotations = main.annotations;
  return {
    cors: corsOf(annotations),
    robots: robotsOf(annotations),
    redirectHttp: needsSslRedirect(annotations?.redirect, hostHasTls, false),
    sourceRange: annotations?.sourceRange,
    basicAuth: main.policy.basicAuth,
    limits: limitsFor(main.ingress, annotations?.rateLimit, options.limits),
    appRoot: annotations?.urlRedirect?.appRoot,
    redirect: annotations?.urlRedirect?.redirect,
  };
}

/** Whether the route hashes requests onto endpoints (upstream-hash-by): its requests need facts. */
function hashes(route: Route): boolean {
  return route.policy.balance?.kind === "hash";
}

/** Whether the route has cookie affinity: its requests need their cookie read. */
function sticks(route: Route): boolean {
  return route.policy.affinity !== undefined;
}

const NO_CANARY_CONTEXT: CanaryContext = { available: () => false, random: Math.random };

/** A policy that answers 503 with `refusal` (the route holds its place). */
export function refusedPolicy(refusal: string, options: TrafficOptions): TrafficPolicy {
  return {
    refusal,
    group: undefined,
    targets: new Map(),
    canaryContext: NO_CANARY_CONTEXT,
    cors: undefined,
    robots: undefined,
    redirectHttp: false,
    redirectPort: options.redirectPort,
    rewrite: undefined,
    sourceRange: undefined,
    limits: undefined,
    appRoot: undefined,
    redirect: undefined,
    errorPages: undefined,
    defaultBackend: undefined,
    wwwRedirect: undefined,
    hashed: false,
  };
}

/**
 * A regex host's answer to a path its patterns would cost too much to match (MAX_MATCH_STEPS): a
 * 414, as for a request target over its bound, and the reason in the access log.
 */
export function tooCostlyPolicy(host: string, options: TrafficOptions): TrafficPolicy {
  const reason = `the path is too long for the regular-expression routes of host ${JSON.stringify(host)} (each request may spend ${MAX_MATCH_STEPS} RE2 steps: path length × their instructions)`;
  return { ...refusedPolicy(reason, options), refusalAnswer: PATH_TOO_COSTLY_ANSWER };
}

/** The policy of from-to-www-redirect's counterpart host: every request goes to `toHost`. */
export function wwwRedirectPolicy(toHost: string, options: TrafficOptions): TrafficPolicy {
  return { ...refusedPolicy("", options), refusal: undefined, wwwRedirect: toHost };
}

/** The answer on a refused route: a 503 that says where to look, never the reason (it may be internal). */
export const REFUSED_ANSWER: OwnAnswer = Object.freeze({
  status: 503,
  headers: [["Content-Type", "text/plain; charset=utf-8"] as const],
  body: "503 Service Unavailable: this route's Ingress is not served (see its Events)\n",
});

/** A path too long for its host's regex routes (tooCostlyPolicy). */
export const PATH_TOO_COSTLY_ANSWER: OwnAnswer = Object.freeze({
  status: 414,
  headers: [["Content-Type", "text/plain; charset=utf-8"] as const],
  body: "414 URI Too Long: this host's routes are regular expressions; send a shorter path\n",
});

/** A client outside the route's source ranges (nginx's `deny`: 403, its body plain text here). */
export const FORBIDDEN_ANSWER: OwnAnswer = Object.freeze({
  status: 403,
  headers: [["Content-Type", "text/plain; charset=utf-8"] as const],
  body: "403 Forbidden\n",
});

/** The answer when the verifier cannot take another password check (its queue is full). */
export const AUTH_UNAVAILABLE_ANSWER: OwnAnswer = Object.freeze({
  status: 503,
  headers: [["Content-Type", "text/plain; charset=utf-8"] as const],
  body: "503 Service Unavailable: authentication is busy, try again\n",
});

/** What to do with one request on a route that has a policy. */
export type Plan =
  | { kind: "answer"; answer: OwnAnswer; decision: string }
  | {
      /**
       * A password is being checked off the event loop: the plan is `resume(verdict)` once
       * `pending` settles (it never rejects). Nothing of the request is sent before.
       */
      kind: "verify";
      pending: Promise<AuthVerdict>;
      resume: (verdict: AuthVerdict) => Plan;
    }
  | {
      kind: "proxy";
      route: Route;
      variant: Variant;
      target: string;
      request: HeaderEdits;
      response: HeaderEdits;
      /** Why this backend: the canary decision's reason. */
      decision: string;
      /** custom-http-errors: answers with these statuses are replaced. */
      errorPages: ErrorPages | undefined;
      /** upstream-hash-by's key for the chosen route ("" when it does not hash). */
      hashKey: string;
      /** limit-connections: frees the client's slot; the request path calls it when the exchange ends. */
      release?: () => void;
      /** affinity: chooses the endpoint (for each try) and the cookie to set; absent without. */
      sticky?: StickyChoice;
      /** Basic auth passed: Authorization is not sent upstream (ingress-nginx sets it to ""). */
      dropAuthorization?: boolean;
    };

/** A plan that sends the request upstream. */
export type ProxyPlan = Extract<Plan, { kind: "proxy" }>;

function pathOf(target: string): string {
  const at = target.indexOf("?");
  return at < 0 ? target : target.slice(0, at);
}

function redirectTo(location: string, status: number, decision: string): Plan {
  const answer = { status, headers: [["Location", location] as const], body: "" };
  return { kind: "answer", answer, decision };
}

/** The CORS preflight answer (allowed origins only); undefined for any other request. */
function preflight(policy: TrafficPolicy, facts: RequestFacts): Plan | undefined {
  if (policy.cors === undefined || facts.method !== "OPTIONS") return undefined;
  const cors = answerCors(policy.cors, facts.method, facts.header("origin"));
  if (cors.kind !== "preflight") return undefined;
  const answer = { status: 204, headers: cors.headers, body: "" };
  return { kind: "answer", answer, decision: "cors-preflight" };
}

/**
 * app-root and permanent/temporal-redirect: nginx `return`s, which run before ssl-redirect (Lua,
 * at the end of the rewrite phase); app-root's is server-level, so first; the CORS preflight's
 * `return 204` comes before the location's redirect.
 */
function rewritePhaseAnswer(
  main: Route,
  policy: TrafficPolicy,
  facts: RequestFacts,
): Plan | undefined {
  if (policy.appRoot !== undefined && pathOf(facts.target) === "/") {
    // ingress-nginx: return 302 $scheme://$http_host<app-root>
    const origin = `${facts.https ? "https" : "http"}://${facts.host ?? main.host}`;
    return redirectTo(`${origin}${policy.appRoot}`, APP_ROOT_STATUS, "app-root");
  }
  const redirect = policy.redirect;
  if (redirect === undefined) return undefined;
  // The URL as written: nginx's `return <code> <url>` appends nothing of the request.
  return (
    preflight(policy, facts) ??
    redirectTo(redirect.url, redirect.status, `${redirect.kind}-redirect`)
  );
}

/**
 * The refusals, before every other answer (nginx would redirect first): a refused client learns
 * nothing. A refused route, then source ranges, then the rate and connection limits; `admitted`
 * receives the connection slot's release when the limits let the request through.
 */
function refusal(
  policy: TrafficPolicy,
  facts: RequestFacts,
  admitted: { release: (() => void) | undefined },
): Plan | undefined {
  if (policy.refusal !== undefined) {
    const answer = policy.refusalAnswer ?? REFUSED_ANSWER;
    return { kind: "answer", answer, decision: `refused: ${policy.refusal}` };
  }
  if (policy.sourceRange !== undefined && !sourceAllowed(policy.sourceRange, facts.client)) {
    return { kind: "answer", answer: FORBIDDEN_ANSWER, decision: "source-range-denied" };
  }
  const limits = policy.limits;
  if (limits === undefined) return undefined;
  const admit = limits.admit(facts.client);
  if (typeof admit === "string") return { kind: "answer", answer: limits.answer, decision: admit };
  admitted.release = admit;
  return undefined;
}

/** The answers that never reach a backend: redirects, robots, the CORS preflight. */
function ownAnswer(main: Route, policy: TrafficPolicy, facts: RequestFacts): Plan | undefined {
  if (policy.wwwRedirect !== undefined) {
    const location = wwwLocation(policy.wwwRedirect, facts);
    return redirectTo(location, SSL_REDIRECT_STATUS, "from-to-www-redirect");
  }
  const rewritten = rewritePhaseAnswer(main, policy, facts);
  if (rewritten !== undefined) return rewritten;
  if (policy.redirectHttp && !facts.https) {
    const location = httpsLocation(facts.host ?? main.host, facts.target, policy.redirectPort);
    return redirectTo(location, SSL_REDIRECT_STATUS, "ssl-redirect");
  }
  if (robotsBody(policy.robots, pathOf(facts.target)) !== undefined) {
    const headers = [["Content-Type", "text/plain; charset=utf-8"] as const];
    return {
      kind: "answer",
      answer: { status: 200, headers, body: DENY_ALL_ROBOTS },
      decision: "robots",
    };
  }
  return preflight(policy, facts);
}

/** CORS headers for the response: Vary is added to, the others replace the backend's. */
function corsEdits(headers: readonly (readonly [string, string])[]): HeaderEdits {
  const set: HeaderPair[] = [];
  const add: HeaderPair[] = [];
  for (const pair of headers) (pair[0] === "vary" ? add : set).push(pair);
  return { set, add };
}

function merge(a: HeaderEdits, b: HeaderEdits): HeaderEdits {
  if (a === NO_EDITS) return b;
  if (b === NO_EDITS) return a;
  return { set: [...a.set, ...b.set], add: [...a.add, ...b.add] };
}

/** Proxy to main or the chosen canary, with the rewrite, dyeing actions and CORS headers. */
function proxyPlan(
  main: Route,
  policy: TrafficPolicy,
  decision: CanaryDecision | undefined,
  facts: RequestFacts,
): Plan {
  const rewrite = policy.rewrite;
  const target =
    rewrite === undefined
      ? facts.target
      : rewriteTarget(rewrite.config, rewrite.pattern, facts.target);
  const cors = answerCors(policy.cors, facts.method, facts.header("origin"));
  const corsResponse = cors.kind === "response" ? corsEdits(cors.headers) : NO_EDITS;
  const canary = decision?.target === "canary" ? policy.targets.get(decision.id) : undefined;
  const reason = decision?.reason ?? "main";
  if (canary === undefined) {
    const response = corsResponse;
    return {
      kind: "proxy",
      route: main,
      variant: "main",
      target,
      request: NO_EDITS,
      response,
      decision: reason,
      errorPages: policy.errorPages,
      hashKey: "",
    };
  }
  return {
    kind: "proxy",
    route: canary.route,
    variant: "canary",
    target: addQuery(target, canary.query),
    request: canary.request,
    response: merge(corsResponse, canary.response),
    decision: reason,
    errorPages: policy.errorPages,
    hashKey: "",
  };
}

/**
 * The plan for one request, decided once: ssl-redirect, robots and the CORS preflight answer
 * here; anything else goes to main or a canary. `random` replaces Math.random in tests.
 */
export function planRequest(
  main: Route,
  policy: TrafficPolicy,
  facts: RequestFacts,
  random?: () => number,
): Plan {
  const admitted = { release: undefined as (() => void) | undefined };
  const refused = refusal(policy, facts, admitted);
  if (refused !== undefined) return refused;
  const auth = policy.basicAuth;
  const rest = { release: admitted.release, random };
  if (auth === undefined) return admittedPlan(main, policy, facts, rest);
  // nginx's access phase: auth_basic after allow/deny and the limits (preaccess).
  const verdict = checkBasicAuth(auth, facts.header("authorization"));
  const next = (v: AuthVerdict): Plan => {
    if (v === "pass") return authenticated(admittedPlan(main, policy, facts, rest));
    admitted.release?.();
    return v === "deny"
      ? { kind: "answer", answer: auth.answer, decision: "unauthorized" }
      : { kind: "answer", answer: AUTH_UNAVAILABLE_ANSWER, decision: "auth-unavailable" };
  };
  if (typeof verdict === "string") return next(verdict);
  return { kind: "verify", pending: verdict, resume: next };
}

function authenticated(plan: Plan): Plan {
  return plan.kind === "proxy" ? { ...plan, dropAuthorization: true } : plan;
}

/** The plan of a request the refusals let through: the policy's own answers, else the backend. */
function admittedPlan(
  main: Route,
  policy: TrafficPolicy,
  facts: RequestFacts,
  { release, random }: { release: (() => void) | undefined; random: (() => number) | undefined },
): Plan {
  const answered = ownAnswer(main, policy, facts);
  if (answered !== undefined) {
    // The gateway's own answers end at once: no connection slot held.
    release?.();
    return answered;
  }
  const context = random === undefined ? policy.canaryContext : { ...policy.canaryContext, random };
  const decision =
    policy.group === undefined ? undefined : canaryDecision(main, policy, context, facts);
  const plan = routedPlan(main, policy, decision, facts);
  if (release !== undefined && plan.kind === "proxy") plan.release = release;
  return plan;
}

/** A sticky client's backend (affinity), else the canary rules' decision. */
function canaryDecision(
  main: Route,
  policy: TrafficPolicy,
  context: CanaryContext,
  facts: RequestFacts,
): CanaryDecision {
  const sticky =
    policy.sticky === true ? stickyCanaryDecision(main, facts, context.available) : undefined;
  return sticky ?? decideCanary(policy.group!, context, facts);
}

/** Main or the canary, main's requests to the default backend when it must, the hash key added. */
function routedPlan(
  main: Route,
  policy: TrafficPolicy,
  decision: CanaryDecision | undefined,
  facts: RequestFacts,
): Plan {
  const proxied = proxyPlan(main, policy, decision, facts);
  const chosen =
    proxied.kind === "proxy" && proxied.variant === "main" && policy.defaultBackend !== undefined
      ? (toDefaultBackend(proxied, policy.defaultBackend, facts) ?? proxied)
      : proxied;
  const keyed = policy.hashed ? withHashKey(chosen, facts) : chosen;
  return policy.sticky === true ? withSticky(keyed, main, policy, facts) : keyed;
}

/** The plan with the sticky choice of the route it chose (not the default backend's: no affinity there). */
function withSticky(plan: Plan, main: Route, policy: TrafficPolicy, facts: RequestFacts): Plan {
  if (plan.kind !== "proxy" || plan.route === policy.defaultBackend) return plan;
  const sticky = stickyChoice(plan.route, main.path, facts);
  return sticky === undefined ? plan : { ...plan, sticky };
}

/** The plan with upstream-hash-by's key of the route it chose. */
function withHashKey(plan: Plan, facts: RequestFacts): Plan {
  if (plan.kind !== "proxy") return plan;
  const balance = plan.route.policy.balance;
  return balance?.kind === "hash" ? { ...plan, hashKey: hashKey(balance.by, facts) } : plan;
}

/**
 * default-backend when the route's Service has no ready endpoint and it has one: the request as
 * it is, with X-Code 503 and the route's X-* headers (nginx.tmpl, "custom-default-backend-").
 */
function toDefaultBackend(plan: ProxyPlan, backend: Route, facts: RequestFacts): Plan | undefined {
  if (plan.route.backend.endpoints.length > 0 || backend.backend.endpoints.length === 0) {
    return undefined;
  }
  const about = routeHeaders(plan.route);
  const headers = errorHeaders(
    about,
    503,
    { target: facts.target, accept: facts.header("accept") },
    false,
  );
  const request = { set: [...plan.request.set, ...headers], add: plan.request.add };
  return { ...plan, route: backend, request, decision: "default-backend" };
}
