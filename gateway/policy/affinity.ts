// Cookie session affinity in the request path, as ingress-nginx's balancer/sticky*.lua: the
// endpoint a request's cookie names, or a new one and a cookie naming it.
//
// balanced: the cookie holds a random key; its endpoint is the key's owner on a consistent-hash
// ring over the ready endpoints (sticky_balanced.lua), so when the Service scales, the sessions
// whose arc a new endpoint takes move to it, and a gone endpoint's sessions spread over the rest.
// persistent: the cookie names its endpoint (sticky_persistent.lua's salted hash of the address),
// kept until that endpoint is gone or not ready; then a random one is chosen and a cookie set.
//
// Every cookie value is made with the route's secret (the Ingress's uid: the same on every
// gateway, unknown to clients): a persistent token is an HMAC of the endpoint, so it does not
// reveal the address (ingress-nginx salts MD5 with the backend's name, which is not secret); a
// balanced key carries its own HMAC, so a made-up key is not taken. A value Bulwark did not
// write, or wrote for another backend, counts as no cookie: a new endpoint of the route's own
// and a new cookie, never an error.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { V1Ingress } from "@kubernetes/client-node";
import type { AffinityConfig, CookieAffinity } from "../../core/annotations";
import { HashRing } from "../routing/balance";
import type { Backend, Endpoint, Route } from "../routing/table";
import type { CanaryDecision } from "./canary";
import type { RequestFacts } from "./request-values";
import {
  parseStickyValue,
  setCookieHeader,
  type CookieRequest,
  type StickyValue,
} from "./sticky-cookie";

/** A route's cookie affinity: its settings and the key its cookies are made with. */
export interface RouteAffinity {
  readonly cookie: CookieAffinity;
  readonly secret: string;
}

/** The affinity an Ingress's annotations give its routes; undefined without `affinity: cookie`. */
export function routeAffinity(
  config: AffinityConfig | undefined,
  ingress: V1Ingress,
): RouteAffinity | undefined {
  const cookie = config?.cookie;
  if (cookie === undefined) return undefined;
  const meta = ingress.metadata;
  // Every object from the API server has a uid; a view without one falls back to its name.
  const secret = meta?.uid ?? `${meta?.namespace ?? ""}/${meta?.name ?? ""}`;
  return { cookie, secret };
}

/**
 * A canary's affinity (controller.go, mergeAlternativeBackend): its main's unless the canary says
 * `affinity-canary-behavior: legacy`, then its own.
 */
export function canaryAffinity(main: Route, canary: Route): RouteAffinity | undefined {
  return canary.annotations?.affinity?.canaryBehavior === "legacy"
    ? canary.policy.affinity
    : main.policy.affinity;
}

// sticky_balanced.lua's MAX_UPSTREAM_CHECKS_COUNT: random keys tried for one that avoids failures.
const MAX_KEY_TRIES = 20;
const NONCE_BYTES = 8;
// Balanced tokens already checked, each with its endpoint: a returning client costs a lookup, not
// an HMAC. Only tokens that passed the check enter; the table is emptied when full.
const MAX_KNOWN_TOKENS = 4096;

/** One backend's endpoints as one route's cookies name them; built once per table and secret. */
export class StickyIndex {
  /** Names the backend in the cookie (ingress-nginx's backend key), so a canary keeps its client. */
  readonly tag: string;
  private tokens: Map<string, number> | undefined = undefined;
  private tokenOf: string[] | undefined = undefined;
  private ring: HashRing | undefined = undefined;
  private readonly known = new Map<string, number>();

  constructor(
    readonly backend: Backend,
    private readonly secret: string,
  ) {
    this.tag = this.mac(`backend\n${backend.key}`, 8);
  }

  private mac(text: string, bytes: number): string {
    return createHmac("sha256", this.secret)
      .update(text)
      .digest("hex")
      .slice(0, bytes * 2);
  }

  /** persistent: the endpoint index a token names; -1 when it names none of the ready ones. */
  persistentIndex(token: string): number {
    return this.persistentTokens().tokens.get(token) ?? -1;
  }

  persistentToken(index: number): string {
    return this.persistentTokens().tokenOf[index]!;
  }

  private persistentTokens(): { tokens: Map<string, number>; tokenOf: string[] } {
    if (this.tokens === undefined || this.tokenOf === undefined) {
      const key = this.backend.key;
      this.tokenOf = this.backend.endpoints.map(e => this.mac(`endpoint\n${key}\n${e.key}`, 16));
      this.tokens = new Map(this.tokenOf.map((token, index) => [token, index]));
    }
    return { tokens: this.tokens, tokenOf: this.tokenOf };
  }

  /** balanced: a key's token, the nonce and its MAC. */
  balancedToken(nonce: string): string {
    return `${nonce}.${this.mac(`key\n${this.backend.key}\n${nonce}`, 8)}`;
  }

  /** balanced: the endpoint index a token's key hashes to; -1 when the token is not ours. */
  balancedIndex(token: string): number {
    const known = this.known.get(token);
    if (known !== undefined) return known;
    const dot = token.indexOf(".");
    if (dot !== NONCE_BYTES * 2) return -1;
    const nonce = token.slice(0, dot);
    const expected = Buffer.from(this.balancedToken(nonce), "latin1");
    const given = Buffer.from(token, "latin1");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return -1;
    const owner = this.owner(nonce);
    if (this.known.size >= MAX_KNOWN_TOKENS) this.known.clear();
    this.known.set(token, owner);
    return owner;
  }

  /** The ring's owner of a key (consistent hashing over the ready endpoints). */
  owner(nonce: string): number {
    this.ring ??= new HashRing(this.backend.endpoints.map(endpoint => endpoint.key));
    return this.ring.find(nonce);
  }
}

const INDEXES = new WeakMap<Backend, Map<string, StickyIndex>>();

/** The backend's index for a secret, made once per table (a Backend lives as long as its table). */
export function stickyIndex(backend: Backend, secret: string): StickyIndex {
  let bySecret = INDEXES.get(backend);
  if (bySecret === undefined) {
    bySecret = new Map();
    INDEXES.set(backend, bySecret);
  }
  let index = bySecret.get(secret);
  if (index === undefined) {
    index = new StickyIndex(backend, secret);
    bySecret.set(secret, index);
  }
  return index;
}

/** The random sources: the nonce of a new balanced key, the pick of a new persistent endpoint. */
export interface StickyRandom {
  nonce(): string;
  below(count: number): number;
}

// Nonces come from a pool of random bytes: one randomBytes call per 512 new sessions.
const NONCE_POOL_BYTES = 512 * NONCE_BYTES;
let noncePool = Buffer.alloc(0);
let noncePoolAt = 0;

function freshNonce(): string {
  if (noncePoolAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    noncePoolAt = 0;
  }
  const nonce = noncePool.toString("hex", noncePoolAt, noncePoolAt + NONCE_BYTES);
  noncePoolAt += NONCE_BYTES;
  return nonce;
}

const RANDOM: StickyRandom = {
  nonce: freshNonce,
  below: count => Math.floor(Math.random() * count),
};

/**
 * One request's choice of endpoint on a route with affinity. `pick` is called for the first try
 * and for each retry (`avoid`: the endpoint that failed); once an endpoint was chosen anew,
 * `setCookie` holds the Set-Cookie header value naming it.
 */
export class StickyChoice {
  setCookie: string | undefined = undefined;
  private failed: Set<number> | undefined = undefined;

  constructor(
    private readonly index: StickyIndex,
    private readonly cookie: CookieAffinity,
    private readonly request: CookieRequest,
    given: {
      /** The request's cookie, when it names an endpoint of this backend. */
      value: StickyValue | undefined;
      random?: StickyRandom;
    },
  ) {
    this.value = given.value;
    this.random = given.random ?? RANDOM;
  }

  private readonly value: StickyValue | undefined;
  private readonly random: StickyRandom;

  pick(avoid?: Endpoint): Endpoint | undefined {
    const endpoints = this.index.backend.endpoints;
    if (endpoints.length === 0) return undefined;
    if (avoid !== undefined) {
      const failed = endpoints.indexOf(avoid);
      if (failed >= 0) (this.failed ??= new Set()).add(failed);
    }
    const named = this.fromCookie();
    // sticky.lua: after a failure a new endpoint only with change-on-failure; without a cookie always.
    if (named >= 0 && (avoid === undefined || !this.cookie.changeOnFailure))
      return endpoints[named];
    const chosen = this.cookie.mode === "persistent" ? this.newPersistent() : this.newBalanced();
    this.setCookie = setCookieHeader(
      this.cookie,
      { token: chosen.token, tag: this.index.tag },
      this.request,
      Date.now(),
    );
    return endpoints[chosen.index];
  }

  /** The endpoint the request's cookie names; -1 for none. */
  private fromCookie(): number {
    const value = this.value;
    if (value === undefined) return -1;
    return this.cookie.mode === "persistent"
      ? this.index.persistentIndex(value.token)
      : this.index.balancedIndex(value.token);
  }

  private isFailed(index: number): boolean {
    return this.failed?.has(index) === true;
  }

  /** sticky_balanced.lua: random keys until one hashes to an endpoint that has not failed. */
  private newBalanced(): { index: number; token: string } {
    let nonce = this.random.nonce();
    let index = this.index.owner(nonce);
    for (let tries = 1; tries < MAX_KEY_TRIES && this.isFailed(index); tries++) {
      nonce = this.random.nonce();
      index = this.index.owner(nonce);
    }
    return { index, token: this.index.balancedToken(nonce) };
  }

  /** sticky_persistent.lua: a random endpoint of those that have not failed (any, when all have). */
  private newPersistent(): { index: number; token: string } {
    const count = this.index.backend.endpoints.length;
    const open: number[] = [];
    for (let index = 0; index < count; index++) if (!this.isFailed(index)) open.push(index);
    const index =
      open.length > 0 ? open[this.random.below(open.length)]! : this.random.below(count);
    return { index, token: this.index.persistentToken(index) };
  }
}

/** The request's affinity cookie for a route, when it is one Bulwark wrote for that route's backend. */
function cookieFor(route: Route, facts: RequestFacts): StickyValue | undefined {
  const affinity = route.policy.affinity;
  if (affinity === undefined) return undefined;
  const value = parseStickyValue(facts.cookie(affinity.cookie.name));
  if (value === undefined) return undefined;
  return value.tag === stickyIndex(route.backend, affinity.secret).tag ? value : undefined;
}

/**
 * balancer.lua's route_to_alternative_balancer: a client whose cookie names main's backend stays
 * on main, one whose cookie names a canary's (with a ready endpoint) goes back to that canary;
 * otherwise undefined, and the canary rules decide.
 */
export function stickyCanaryDecision(
  main: Route,
  facts: RequestFacts,
  available: (id: string) => boolean,
): CanaryDecision | undefined {
  if (cookieFor(main, facts) !== undefined) {
    return { target: "main", reason: `affinity ${main.policy.affinity!.cookie.name}` };
  }
  for (const canary of main.canaries) {
    const actions = canary.annotations?.canary?.actions;
    if (actions === undefined || !available(canary.ingress)) continue;
    if (cookieFor(canary, facts) === undefined) continue;
    const reason = `affinity ${canary.policy.affinity!.cookie.name}`;
    return { target: "canary", id: canary.ingress, reason, actions };
  }
  return undefined;
}

/** The choice for a request the plan sends to `route`; undefined when the route has no affinity. */
export function stickyChoice(
  route: Route,
  routePath: string,
  facts: RequestFacts,
): StickyChoice | undefined {
  const affinity = route.policy.affinity;
  if (affinity === undefined) return undefined;
  const request = { routePath, https: facts.https, userAgent: facts.header("user-agent") };
  const index = stickyIndex(route.backend, affinity.secret);
  return new StickyChoice(index, affinity.cookie, request, { value: cookieFor(route, facts) });
}

/** Node's flat response headers with the choice's Set-Cookie added (a fresh array, as given). */
export function withStickyCookie(headers: string[], sticky: StickyChoice | undefined): string[] {
  const cookie = sticky?.setCookie;
  if (cookie !== undefined) headers.push("Set-Cookie", cookie);
  return headers;
}
