// Small per-request rules of an Ingress's annotations that answer without the backend or change
// the request line: Tengine's disable-robots, ingress-nginx's ssl-redirect and rewrite-target.
import type { RedirectConfig } from "../../core/annotations/redirect";
import type { RewriteConfig } from "../../core/annotations/rewrite";
import type { RobotsConfig } from "../../core/annotations/robots";
import type { LinearPattern } from "../../core/patterns/linear-regex";

export const ROBOTS_PATH = "/robots.txt";
export const DENY_ALL_ROBOTS = "User-agent: *\nDisallow: /\n";

/** The deny-all robots.txt body when the host disables robots and this is its path. */
export function robotsBody(config: RobotsConfig | undefined, path: string): string | undefined {
  return config?.disableRobots && path === ROBOTS_PATH ? DENY_ALL_ROBOTS : undefined;
}

/** ingress-nginx's default http-redirect-code: keeps the method and body. */
export const SSL_REDIRECT_STATUS = 308;

/**
 * Whether a plain-HTTP request must be redirected to HTTPS: when the host has a certificate (any
 * Ingress of the host lists it in spec.tls) unless this path's Ingress sets ssl-redirect "false";
 * force-ssl-redirect redirects even without one.
 */
export function needsSslRedirect(
  config: RedirectConfig | undefined,
  hostHasTls: boolean,
  isHttps: boolean,
): boolean {
  if (isHttps) return false;
  if (config?.forceSslRedirect) return true;
  // lua_ingress.lua redirect_to_https: ssl_redirect (default true) and a certificate for the host.
  return (config?.sslRedirect ?? true) && hostHasTls;
}

/** The Location of the redirect: the same host and request target on the HTTPS port. */
export function httpsLocation(host: string, target: string, httpsPort: number): string {
  const name = host.replace(/:\d+$/, "");
  return `https://${name}${httpsPort === 443 ? "" : `:${httpsPort}`}${target}`;
}

/**
 * from-to-www-redirect's Location (ingress-nginx's ngx_srv_redirect.lua): the request's scheme, the
 * other host, and the request URI without one trailing "/". The port is the one the client put in
 * Host (nginx writes its own listening port, which behind a Service is not the client's).
 */
export function wwwLocation(
  toHost: string,
  facts: { https: boolean; host: string | undefined; target: string },
): string {
  const port = /:\d+$/.exec(facts.host ?? "")?.[0] ?? "";
  const uri = facts.target.endsWith("/") ? facts.target.slice(0, -1) : facts.target;
  return `${facts.https ? "https" : "http"}://${toHost}${port}${uri}`;
}

/**
 * The rewritten request target: as nginx's `rewrite`, the whole path is replaced by the target
 * with "$1".."$9" taken from the path regex's captures; the query string is kept.
 */
export function rewriteTarget(config: RewriteConfig, regex: LinearPattern, target: string): string {
  if (config.target === undefined) return target;
  const queryAt = target.indexOf("?");
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  const query = queryAt < 0 ? "" : target.slice(queryAt);
  const match = regex.exec(path);
  if (!match) return target;
  const rewritten = config.target.replace(/\$([1-9])/g, (_, n: string) => match[Number(n)] ?? "");
  return (rewritten.startsWith("/") ? rewritten : `/${rewritten}`) + query;
}
