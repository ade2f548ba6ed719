// ingress-nginx's session affinity (annotations/sessionaffinity, balancer/sticky*.lua): `affinity:
// cookie` pins a client to one endpoint through a cookie the gateway sets. `affinity-mode`
// balanced (the default) keeps a random key in the cookie and finds its endpoint on a
// consistent-hash ring, so some sessions move when the Service scales; persistent names the
// endpoint itself, so sessions stay until their endpoint goes. The cookie's attributes follow the
// session-cookie-* annotations. `affinity-canary-behavior` is read on a canary Ingress: sticky (the
// default) gives the canary its main's affinity, so a client keeps its canary decision; legacy
// leaves the canary to its own annotations.
import { z } from "zod";
import { annotationPath, keyOf, parseFamily, type Family } from "./family";
import { loadBalancingFamily } from "./load-balancing";
import { annotation, annotationKey, bad, good, parseBool, quote, type Parsed } from "./validators";
import type { FieldError, Result } from "../result";

const fields = {
  type: {
    annotation: "affinity",
    type: '"cookie"',
    default: "",
    doc: 'Session affinity: "cookie" sends a client\'s requests to the endpoint its cookie names (the only type ingress-nginx has). Takes precedence over load-balance and upstream-hash-by.',
  },
  mode: {
    annotation: "affinity-mode",
    type: '"balanced" or "persistent"',
    default: "balanced",
    doc: "balanced: the cookie holds a random key hashed onto the endpoints, so some sessions move to new endpoints when the Service scales; persistent: the cookie names its endpoint, sessions move only when it goes.",
  },
  canaryBehavior: {
    annotation: "affinity-canary-behavior",
    type: '"sticky" or "legacy"',
    default: "sticky",
    doc: "On a canary Ingress. sticky: the canary takes its main's affinity, so a client served by the canary (or by main) stays there; legacy: the canary's own affinity annotations apply, if any.",
  },
  cookieName: {
    annotation: "session-cookie-name",
    type: "cookie name",
    default: "INGRESSCOOKIE",
    doc: "The affinity cookie's name.",
  },
  cookiePath: {
    annotation: "session-cookie-path",
    type: "path",
    default: "the Ingress path",
    doc: "The cookie's Path; required with regex paths (use-regex, rewrite-target), as a regex is no cookie path.",
  },
  cookieDomain: {
    annotation: "session-cookie-domain",
    type: "domain",
    default: "",
    doc: "The cookie's Domain; none by default (the cookie goes back to the host that set it).",
  },
  sameSite: {
    annotation: "session-cookie-samesite",
    type: '"None", "Lax" or "Strict"',
    default: "",
    doc: "The cookie's SameSite attribute (any case; written None, Lax or Strict).",
  },
  conditionalSameSiteNone: {
    annotation: "session-cookie-conditional-samesite-none",
    type: "boolean",
    default: "false",
    doc: "Leaves SameSite=None out for browsers that reject it (Chrome 51-66, iOS 12, macOS 10.14 Safari), as ingress-nginx's same_site.lua.",
  },
  secure: {
    annotation: "session-cookie-secure",
    type: "boolean",
    default: "false",
    doc: "Marks the cookie Secure on plain HTTP too (it always is on HTTPS).",
  },
  maxAge: {
    annotation: "session-cookie-max-age",
    type: "integer (seconds)",
    default: "",
    doc: "The cookie's Max-Age; none by default (a session cookie).",
  },
  expires: {
    annotation: "session-cookie-expires",
    type: "integer (seconds)",
    default: "",
    doc: "An Expires attribute this many seconds after the answer (for browsers without Max-Age).",
  },
  changeOnFailure: {
    annotation: "session-cookie-change-on-failure",
    type: "boolean",
    default: "false",
    doc: "When a request is retried after its cookie's endpoint failed, true picks another endpoint and sets a new cookie; false retries the same endpoint.",
  },
} as const;

type Field = keyof typeof fields;

export type AffinityMode = "balanced" | "persistent";
export type SameSite = "None" | "Lax" | "Strict";

/** The cookie affinity of an Ingress, with ingress-nginx's defaults. */
export interface CookieAffinity {
  mode: AffinityMode;
  name: string;
  /** undefined: the path of the route the cookie is set on. */
  path: string | undefined;
  domain: string | undefined;
  sameSite: SameSite | undefined;
  conditionalSameSiteNone: boolean;
  /** Secure on plain HTTP too. */
  secure: boolean;
  maxAge: number | undefined;
  expires: number | undefined;
  changeOnFailure: boolean;
}

/** ingress-nginx's default session-cookie-name. */
export const DEFAULT_AFFINITY_COOKIE = "INGRESSCOOKIE";

/** `affinity: cookie` alone: ingress-nginx's defaults. */
export const COOKIE_AFFINITY_DEFAULTS: Readonly<CookieAffinity> = Object.freeze({
  mode: "balanced",
  name: DEFAULT_AFFINITY_COOKIE,
  path: undefined,
  domain: undefined,
  sameSite: undefined,
  conditionalSameSiteNone: false,
  secure: false,
  maxAge: undefined,
  expires: undefined,
  changeOnFailure: false,
});

/** An option list as ingress-nginx's ValidateOptions(options, caseSensitive, trimSpace=true). */
function option<T extends string>(options: readonly T[], caseSensitive: boolean) {
  const expected = options.map(o => `"${o}"`).join(" or ");
  return (raw: string): Parsed<T> => {
    const word = caseSensitive ? raw.trim() : raw.trim().toLowerCase();
    const found = options.find(o => (caseSensitive ? o : o.toLowerCase()) === word);
    return found === undefined ? bad(expected, raw) : good(found);
  };
}

// A cookie name is an RFC 6265 token; of ingress-nginx's basic characters, "/" and ":" are not.
const COOKIE_NAME = /^[A-Za-z0-9._~-]{1,128}$/;
const DOMAIN =
  /^\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
// ingress-nginx's URLIsValidRegex characters, starting with "/"; nothing that ends an attribute.
const COOKIE_PATH = /^\/[-._~a-zA-Z0-9/:,?&=]{0,1023}$/;
const SECONDS = /^(0|-?[1-9][0-9]{0,9})$/;
const MAX_SECONDS = 0x7fffffff;

function parseCookieName(raw: string): Parsed<string> {
  if (COOKIE_NAME.test(raw)) return good(raw);
  return bad('a cookie name of letters, digits, ".", "_", "~" and "-"', raw);
}

function parseDomain(raw: string): Parsed<string> {
  if (raw.length <= 253 && DOMAIN.test(raw)) return good(raw);
  return bad('a domain name such as "example.com"', raw);
}

function parseCookiePath(raw: string): Parsed<string> {
  if (COOKIE_PATH.test(raw)) return good(raw);
  return bad('a path starting with "/" (letters, digits and "-._~/:,?&=")', raw);
}

/** A whole number of seconds as ingress-nginx's affinityCookieExpiresRegex means it (it may be negative). */
function parseCookieSeconds(raw: string): Parsed<number> {
  const value = SECONDS.test(raw) ? Number(raw) : NaN;
  if (Math.abs(value) <= MAX_SECONDS) return good(value);
  return bad(`an integer number of seconds between ${-MAX_SECONDS} and ${MAX_SECONDS}`, raw);
}

export const affinitySchema = z
  .object({
    type: annotation(option(["cookie"] as const, true)).optional(),
    mode: annotation(option(["balanced", "persistent"] as const, true)).optional(),
    canaryBehavior: annotation(option(["sticky", "legacy"] as const, true)).optional(),
    cookieName: annotation(parseCookieName).optional(),
    cookiePath: annotation(parseCookiePath).optional(),
    cookieDomain: annotation(parseDomain).optional(),
    sameSite: annotation(option(["None", "Lax", "Strict"] as const, false)).optional(),
    conditionalSameSiteNone: annotation(parseBool).optional(),
    secure: annotation(parseBool).optional(),
    maxAge: annotation(parseCookieSeconds).optional(),
    expires: annotation(parseCookieSeconds).optional(),
    changeOnFailure: annotation(parseBool).optional(),
  } satisfies Record<Field, z.ZodType>)
  .transform(v => ({
    /** undefined: no affinity of its own (a canary may still take its main's). */
    cookie:
      v.type === undefined
        ? undefined
        : ({
            mode: v.mode ?? COOKIE_AFFINITY_DEFAULTS.mode,
            name: v.cookieName ?? COOKIE_AFFINITY_DEFAULTS.name,
            path: v.cookiePath,
            domain: v.cookieDomain,
            sameSite: v.sameSite,
            conditionalSameSiteNone:
              v.conditionalSameSiteNone ?? COOKIE_AFFINITY_DEFAULTS.conditionalSameSiteNone,
            secure: v.secure ?? COOKIE_AFFINITY_DEFAULTS.secure,
            maxAge: v.maxAge,
            expires: v.expires,
            changeOnFailure: v.changeOnFailure ?? COOKIE_AFFINITY_DEFAULTS.changeOnFailure,
          } satisfies CookieAffinity),
    canaryBehavior: v.canaryBehavior ?? ("sticky" as const),
  }));

export type AffinityConfig = z.output<typeof affinitySchema>;

export const affinityFamily: Family<AffinityConfig, Field> = {
  name: "affinity",
  fields,
  schema: affinitySchema,
  warnings: (value, present) => {
    if (value.cookie !== undefined) return [];
    const ignored = [...present].filter(field => field !== "canaryBehavior");
    if (ignored.length === 0) return [];
    const keys = ignored.map(field => `"${keyOf(affinityFamily, field)}"`).join(", ");
    return [`annotations ${keys} are ignored without "${keyOf(affinityFamily, "type")}: cookie"`];
  },
};

export function parseAffinity(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<AffinityConfig | undefined> {
  return parseFamily(affinityFamily, annotations);
}

/**
 * The rules between affinity and the other families. A regex path is no cookie path, so with
 * regex paths session-cookie-path must be set (ingress-nginx logs a warning and writes the regex
 * as the Path, which the browser never matches: stickiness silently lost; refused here).
 */
export function affinityErrors(
  affinity: AffinityConfig | undefined,
  regexPaths: boolean,
): FieldError[] {
  const cookie = affinity?.cookie;
  if (cookie === undefined || cookie.path !== undefined || !regexPaths) return [];
  const key = keyOf(affinityFamily, "cookiePath");
  return [
    {
      field: annotationPath(key),
      message: `expected a cookie path when the paths are regular expressions (use-regex or rewrite-target), got none`,
    },
  ];
}

/** Why load-balance and upstream-hash-by do nothing next to affinity (balancer.lua: sticky first). */
export function affinityWarnings(
  affinity: AffinityConfig | undefined,
  annotations: Readonly<Record<string, string>> | undefined,
): string[] {
  if (affinity?.cookie === undefined) return [];
  const balancing = Object.values(loadBalancingFamily.fields)
    .map(field => annotationKey(field.annotation))
    .filter(key => annotations?.[key] !== undefined);
  if (balancing.length === 0) return [];
  const keys = balancing.map(key => quote(key)).join(", ");
  return [
    `annotations ${keys} are ignored: "${keyOf(affinityFamily, "type")}" chooses the endpoint`,
  ];
}
