// ingress-nginx's custom-http-errors and default-backend in the request path. A backend answer
// with a listed status is dropped and the request is asked again of the default-backend Service,
// as nginx's `error_page <code> = @custom_…` location does (nginx.tmpl): the path becomes "/"
// (the query kept), the body is not sent again (Bulwark streamed it to the first backend), and
// X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port
// say what happened; the client gets the error backend's answer. X-Request-ID is the client's own
// when it sent one (Bulwark makes none). Without default-backend the gateway answers its own
// plain page of the status, as ingress-nginx's built-in default backend would be asked instead.
import type { Route } from "../routing/table";
import type { HeaderPair } from "./head-edits";

export interface ErrorPages {
  /** Statuses of the backend's answer that are replaced. */
  readonly codes: ReadonlySet<number>;
  /** The default-backend Service's route; undefined: the gateway's own page. */
  readonly backend: Route | undefined;
  /** X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port of the route, fixed per route. */
  readonly about: readonly HeaderPair[];
}

/** "namespace/service:port" of a Backend key, split. */
function serviceOf(backendKey: string): { namespace: string; service: string; port: string } {
  const slash = backendKey.indexOf("/");
  const colon = backendKey.lastIndexOf(":");
  return {
    namespace: backendKey.slice(0, slash),
    service: backendKey.slice(slash + 1, colon),
    port: backendKey.slice(colon + 1),
  };
}

/** What the error backend is told about the route: nginx's $namespace, $ingress_name, $service_*. */
export function routeHeaders(main: Route): HeaderPair[] {
  const { namespace, service, port } = serviceOf(main.backend.key);
  const ingressName = main.ingress.slice(main.ingress.indexOf("/") + 1);
  return [
    ["X-Namespace", namespace],
    ["X-Ingress-Name", ingressName],
    ["X-Service-Name", service],
    ["X-Service-Port", port],
  ];
}

export function compileErrorPages(
  main: Route,
  codes: readonly number[],
  backend: Route | undefined,
): ErrorPages | undefined {
  if (codes.length === 0) return undefined;
  return { codes: new Set(codes), backend, about: routeHeaders(main) };
}

/** The request facts the error backend's headers need. */
export interface ErrorRequestFacts {
  /** The request target as the client sent it (nginx's $request_uri). */
  readonly target: string;
  /** The client's Accept header (nginx's $http_accept); undefined when absent. */
  readonly accept: string | undefined;
}

/** The headers set on a request to the default backend, for status `code`. */
export function errorHeaders(
  about: readonly HeaderPair[],
  code: number,
  facts: ErrorRequestFacts,
  originalUri: boolean,
): HeaderPair[] {
  const headers: HeaderPair[] = [["X-Code", String(code)]];
  // nginx leaves out a header whose value is empty.
  if (facts.accept) headers.push(["X-Format", facts.accept]);
  if (originalUri) headers.push(["X-Original-URI", facts.target]);
  headers.push(...about);
  return headers;
}

/** nginx's `rewrite (.*) / break`: the path becomes "/", the query stays. */
export function errorTarget(target: string): string {
  const query = target.indexOf("?");
  return query < 0 ? "/" : `/${target.slice(query)}`;
}

/** The request's own header lines that describe its body, which the error request does not carry. */
export const BODY_HEADERS: ReadonlySet<string> = new Set(["content-length", "transfer-encoding"]);
