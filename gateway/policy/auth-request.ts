// The auth request itself (I/O): one HTTP(S) request to auth-url with the headers
// external-auth.ts made, no body, a connect timeout and a timeout for the answer's head. Its
// answer is the status and headers; the body is read and dropped. Any failure (refused, reset,
// a timeout, a TLS certificate that does not verify) is a failed answer, which the caller turns
// into a 500: nothing here ever lets a request through.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { HeaderPair } from "./head-edits";

export interface AuthTimeouts {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
}

export interface AuthKeepalive {
  /** Idle connections kept per worker and auth server (auth-keepalive); 0 closes each one. */
  readonly connections: number;
  /** How long an idle kept connection stays open (auth-keepalive-timeout). */
  readonly timeoutSeconds: number;
}

export type AuthAnswer =
  | { kind: "answered"; status: number; headers: IncomingHttpHeaders }
  | { kind: "failed"; reason: "connect-timeout" | "read-timeout" | "error"; detail: string };

/** One agent per keepalive setting and scheme: few distinct ones, shared by every route. */
const agents = new Map<string, HttpAgent>();
const MAX_AGENTS = 64;

function agentFor(https: boolean, keepalive: AuthKeepalive): HttpAgent {
  const key = `${https}/${keepalive.connections}/${keepalive.timeoutSeconds}`;
  let agent = agents.get(key);
  if (agent !== undefined) return agent;
  const options = {
    keepAlive: keepalive.connections > 0,
    maxFreeSockets: Math.max(1, keepalive.connections),
    timeout: keepalive.timeoutSeconds * 1000,
    scheduling: "lifo" as const,
  };
  agent = https ? new HttpsAgent(options) : new HttpAgent(options);
  if (agents.size >= MAX_AGENTS) {
    const [oldKey, old] = agents.entries().next().value as [string, HttpAgent];
    agents.delete(oldKey);
    old.destroy();
  }
  agents.set(key, agent);
  return agent;
}

/** Asks auth-url; resolves with its answer's head or why there is none, never rejects. */
export function askAuthServer(
  url: URL,
  method: string,
  headers: readonly HeaderPair[],
  options: { timeouts: AuthTimeouts; keepalive: AuthKeepalive },
): Promise<AuthAnswer> {
  return new Promise(resolve => {
    const https = url.protocol === "https:";
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const request = (https ? httpsRequest : httpRequest)({
      method,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: headers.flat(),
      setHost: false,
      agent: agentFor(https, options.keepalive),
      // SNI with a name (nginx's proxy_ssl_server_name on); the certificate is verified.
      servername: https && isIP(hostname) === 0 ? hostname : undefined,
    });
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (answer: AuthAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const fail = (reason: "connect-timeout" | "read-timeout" | "error", detail: string) => {
      settle({ kind: "failed", reason, detail });
      request.destroy();
    };
    const connected = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => fail("read-timeout", `no answer within ${options.timeouts.readTimeoutMs} ms`),
        options.timeouts.readTimeoutMs,
      );
    };
    timer = setTimeout(
      () => fail("connect-timeout", `not connected within ${options.timeouts.connectTimeoutMs} ms`),
      options.timeouts.connectTimeoutMs,
    );
    request.once("socket", socket => {
      if (socket.connecting) socket.once("connect", connected);
      else connected();
    });
    request.once("error", error => fail("error", error.message));
    request.once("response", response => {
      settle({ kind: "answered", status: response.statusCode ?? 0, headers: response.headers });
      // The body means nothing here; it is drained so the connection can be kept, within the read timeout.
      const drain = setTimeout(() => response.destroy(), options.timeouts.readTimeoutMs);
      response.once("close", () => clearTimeout(drain));
      response.on("error", () => undefined);
      response.resume();
    });
    request.end();
  });
}
