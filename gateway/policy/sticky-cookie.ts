// The affinity cookie as text: its value's shape and the Set-Cookie header that carries it, as
// ingress-nginx's sticky.lua writes it with lua-resty-cookie (Expires, Max-Age, Domain, Path,
// Secure, HttpOnly, SameSite, in that order), and same_site.lua's list of browsers that reject
// SameSite=None. Pure: the clock is an argument.
import type { CookieAffinity } from "../../core/annotations";

/**
 * The value of an affinity cookie: which endpoint (`token`) of which backend (`tag`), as
 * ingress-nginx's "<key>|<backend key>". Both are hex digests made with the route's secret
 * (affinity.ts), so the value says nothing of the addresses behind it.
 */
export interface StickyValue {
  readonly token: string;
  readonly tag: string;
}

// A balanced token is a nonce and its MAC, a persistent one a MAC of the endpoint; 16 hex tag.
const VALUE = /^([0-9a-f]{16}\.[0-9a-f]{16}|[0-9a-f]{32})\|([0-9a-f]{16})$/;

/** The cookie's value when it has the shape Bulwark writes; anything else counts as no cookie. */
export function parseStickyValue(raw: string | undefined): StickyValue | undefined {
  if (raw === undefined || raw.length > 64) return undefined;
  // A quoted value (RFC 6265 allows DQUOTEs around it) is read without them.
  const text = raw.length > 1 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  const match = VALUE.exec(text);
  return match === null ? undefined : { token: match[1]!, tag: match[2]! };
}

/**
 * ingress-nginx's same_site_none_compatible: the user agents (Chrome 40-69, iOS 12, macOS 10.14
 * Safari) that reject or mistreat a SameSite=None cookie. No User-Agent is compatible.
 */
export function sameSiteNoneCompatible(userAgent: string | undefined): boolean {
  if (userAgent === undefined) return true;
  if (/Chrome\/[456]/.test(userAgent)) return false;
  if (userAgent.includes("CPU iPhone OS 12") || userAgent.includes("iPad; CPU OS 12")) return false;
  const oldMacSafari =
    userAgent.includes("Macintosh") &&
    userAgent.includes("Intel Mac OS X 10_14") &&
    userAgent.includes("Safari") &&
    !userAgent.includes("Chrome");
  return !oldMacSafari;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/**
 * nginx's ngx_http_cookie_time, which ngx.cookie_time is: "Thu, 18-Nov-10 11:27:35 GMT", the
 * year in two digits up to 2037 and in four after; times before 1970 are 1970.
 */
export function cookieTime(epochSeconds: number): string {
  const date = new Date(Math.max(0, epochSeconds) * 1000);
  const year = date.getUTCFullYear();
  const shownYear = year > 2037 ? String(year) : two(year % 100);
  const time = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
  return `${DAYS[date.getUTCDay()]}, ${two(date.getUTCDate())}-${MONTHS[date.getUTCMonth()]}-${shownYear} ${time} GMT`;
}

/** What of the request shapes the cookie's attributes. */
export interface CookieRequest {
  /** The route's path as written: the Path when session-cookie-path is not set. */
  readonly routePath: string;
  readonly https: boolean;
  readonly userAgent: string | undefined;
}

// RFC 6265 path-value: no control characters, no ";" (nor spaces, which would be trimmed).
const PATH_VALUE = /^\/[\x21-\x3a\x3c-\x7e]*$/;

/** The route's path as the cookie's Path; "/" when it is no path-value (it cannot end the attribute). */
function pathAttribute(routePath: string): string {
  return PATH_VALUE.test(routePath) ? routePath : "/";
}

/** The Set-Cookie header value that gives the client `value`. */
export function setCookieHeader(
  cookie: CookieAffinity,
  value: StickyValue,
  request: CookieRequest,
  nowMs: number,
): string {
  let header = `${cookie.name}=${value.token}|${value.tag}`;
  if (cookie.expires !== undefined) {
    header += `; Expires=${cookieTime(Math.floor(nowMs / 1000) + cookie.expires)}`;
  }
  if (cookie.maxAge !== undefined) header += `; Max-Age=${cookie.maxAge}`;
  if (cookie.domain !== undefined) header += `; Domain=${cookie.domain}`;
  header += `; Path=${cookie.path ?? pathAttribute(request.routePath)}`;
  // sticky.lua: Secure when asked for, and always on HTTPS.
  if (cookie.secure || request.https) header += "; Secure";
  header += "; HttpOnly";
  const sameSite = cookie.sameSite;
  const dropNone =
    sameSite === "None" &&
    cookie.conditionalSameSiteNone &&
    !sameSiteNoneCompatible(request.userAgent);
  if (sameSite !== undefined && !dropNone) header += `; SameSite=${sameSite}`;
  return header;
}
