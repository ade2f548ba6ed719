// CORS as ingress-nginx answers it (cors annotations), with the one change Tengine-Ingress's
// users ask for: with several allowed origins, the response echoes the request's Origin when it
// is allowed, never the whole list. A request from an origin that is not allowed gets no CORS
// headers and, like ingress-nginx, its OPTIONS goes to the backend instead of a 204.
import type { CorsConfig } from "../../core/annotations/cors";

export type CorsAnswer =
  /** An OPTIONS request from an allowed origin: answer 204 with these headers, no proxying. */
  | { kind: "preflight"; headers: [string, string][] }
  /** Proxy the request and add these headers to the response. */
  | { kind: "response"; headers: [string, string][] }
  /** Not a CORS request this config allows: proxy untouched. */
  | { kind: "none" };

const SCHEME_HOST_PORT = /^([a-z][a-z0-9+.-]*):\/\/([^:/]+)(?::(\d+))?$/;

/** Whether `origin` (from the request) is allowed by one configured entry. */
export function originAllowed(allowed: string, origin: string): boolean {
  const wanted = origin.toLowerCase();
  if (!allowed.includes("://*.")) return allowed === wanted;
  const a = SCHEME_HOST_PORT.exec(allowed);
  const o = SCHEME_HOST_PORT.exec(wanted);
  if (!a || !o || a[1] !== o[1] || a[3] !== o[3]) return false;
  // "*.example.com" stands for exactly one more leading label.
  const suffix = (a[2] ?? "").slice(1);
  const host = o[2] ?? "";
  if (!host.endsWith(suffix)) return false;
  const label = host.slice(0, host.length - suffix.length);
  return label.length > 0 && !label.includes(".");
}

function allowOriginValue(config: CorsConfig, origin: string | undefined): string | undefined {
  if (config.allowOrigin === "*") return "*";
  if (origin === undefined) return undefined;
  return config.allowOrigin.some(entry => originAllowed(entry, origin)) ? origin : undefined;
}

export function answerCors(
  config: CorsConfig | undefined,
  method: string,
  origin: string | undefined,
): CorsAnswer {
  if (!config?.enabled) return { kind: "none" };
  const allowOrigin = allowOriginValue(config, origin);
  if (allowOrigin === undefined) return { kind: "none" };
  const headers: [string, string][] = [["access-control-allow-origin", allowOrigin]];
  // An echoed origin makes the response depend on the request's Origin: caches must know.
  if (allowOrigin !== "*") headers.push(["vary", "Origin"]);
  if (config.allowCredentials) headers.push(["access-control-allow-credentials", "true"]);
  if (method === "OPTIONS") {
    headers.push(
      ["access-control-allow-methods", config.allowMethods.join(", ")],
      ["access-control-allow-headers", config.allowHeaders.join(", ")],
      ["access-control-max-age", String(config.maxAgeSeconds)],
      ["content-type", "text/plain; charset=utf-8"],
      ["content-length", "0"],
    );
    return { kind: "preflight", headers };
  }
  if (config.exposeHeaders.length > 0) {
    headers.push(["access-control-expose-headers", config.exposeHeaders.join(", ")]);
  }
  return { kind: "response", headers };
}
