// The `http` provider: a generic authorization REST API (the contract is in README.md here).
// grant = POST /v1/grants (answers a job), poll = GET /v1/grants/{id}, revoke = POST
// /v1/revocations. Every method sends exactly one request, so the limiter's guarantee holds.
import { isIP } from "node:net";
import { z } from "zod";
import { httpParamsSchema, type HttpParams } from "../../core/permission/params";
import { fail, ok, type Result } from "../../core/result";
import { errorText } from "../../kube/log";
import { abortError, clip, deadline, errorCode, parseParams } from "./errors";
import { TransientProviderError, type GrantRequest, type GrantState, type Provider } from "./types";

/** The backend no longer knows a job (it lost it, or expired it): start again with `grant`. */
export class GrantLostError extends TransientProviderError {
  constructor(message: string) {
    super(message);
    this.name = "GrantLostError";
  }
}

/** How the provider authenticates, from the credentials Secret (see README.md). */
export type HttpAuth =
  | { kind: "bearer"; token: string }
  | { kind: "basic"; username: string; password: string };

/**
 * The Secret's keys: `token` (sent as `Authorization: Bearer <token>`), or `username` and
 * `password` (sent as HTTP basic auth). No Secret, or an empty one, sends no Authorization.
 */
export function parseHttpCredentials(
  data: Readonly<Record<string, string>> | undefined,
): Result<HttpAuth | undefined> {
  const token = data?.token?.trim();
  const { username, password } = data ?? {};
  if (token && (username || password)) {
    return fail([
      { field: "token", message: "set either token or username and password, not both" },
    ]);
  }
  if (token) return ok({ kind: "bearer", token });
  if (!username && !password) return ok(undefined);
  return basicAuth(username, password);
}

function basicAuth(username = "", password = ""): Result<HttpAuth> {
  if (!username) return fail([{ field: "username", message: "is required with password" }]);
  if (!password) return fail([{ field: "password", message: "is required with username" }]);
  if (username.includes(":")) {
    return fail([{ field: "username", message: "must not contain ':' (basic auth)" }]);
  }
  return ok({ kind: "basic", username, password });
}

export interface HttpProviderOptions {
  /** The PermissionProvider's name. */
  name: string;
  /** Base URL; a path prefix is kept (`https://authz.example/api` → `…/api/v1/grants`). */
  address: string;
  /** Per request, connect to last byte. */
  timeoutMs: number;
  auth?: HttpAuth;
  /** For tests; the global fetch by default. */
  fetch?: typeof fetch;
}

const jobSchema = z.object({
  id: z.string().min(1).max(512),
  state: z.enum(["pending", "granted", "denied"]),
  reason: z.string().optional(),
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or bad. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The backend's message from an error body: `{"error": …}`, `{"message": …}` or the text. */
export function backendMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === "object" && body !== null) {
      const { error, message } = body as { error?: unknown; message?: unknown };
      if (typeof error === "string") return clip(error);
      if (typeof message === "string") return clip(message);
    }
  } catch {
    // not JSON: the text itself
  }
  return clip(text) || "(no message)";
}

/**
 * A non-2xx answer as the provider reports it: a TransientProviderError to throw (5xx, 408,
 * 429, 401), or the denial reason (any other 4xx: the request itself is wrong or refused).
 */
export function classifyFailure(
  what: string,
  answer: Answer,
): { transient: TransientProviderError } | { denied: string } {
  const message = backendMessage(answer.text);
  const { status } = answer;
  if (status === 429) {
    const wait = retryAfterMs(answer.headers.get("retry-after"));
    return { transient: new TransientProviderError(`${what}: 429 rate limited: ${message}`, wait) };
  }
  // 401: our credentials are wrong or expired, a fault of the provider's setup, not of the pod.
  if (status >= 500 || status === 408 || status === 401 || status < 400) {
    const wait = retryAfterMs(answer.headers.get("retry-after"));
    return { transient: new TransientProviderError(`${what}: HTTP ${status}: ${message}`, wait) };
  }
  return { denied: `${what}: HTTP ${status}: ${message}` };
}

function jobState(what: string, text: string): GrantState {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new TransientProviderError(`${what}: the answer is not JSON: ${clip(text, 100)}`);
  }
  const parsed = jobSchema.safeParse(body);
  if (!parsed.success) {
    throw new TransientProviderError(
      `${what}: the answer is not a job ({id, state}): ${clip(text, 100)}`,
    );
  }
  const job = parsed.data;
  if (job.state === "denied") {
    return {
      state: "denied",
      jobId: job.id,
      reason: job.reason ?? "denied by the authorization API",
    };
  }
  return { state: job.state, jobId: job.id };
}

/** The body that names one permission for one pod, for grant and revoke alike. */
function permissionBody(request: GrantRequest, params: HttpParams): Record<string, unknown> {
  return {
    ip: request.ip,
    resource: params.resource,
    action: params.action,
    ...(params.port === undefined ? {} : { port: params.port }),
    pod: { namespace: request.namespace, name: request.pod, uid: request.podUid },
    group: request.group,
  };
}

export function idempotencyKey(request: GrantRequest, params: HttpParams): string {
  return [request.podUid, request.ip, params.resource, params.action, params.port ?? "*"].join("/");
}

export class HttpProvider implements Provider {
  readonly name: string;
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly authorization: string | undefined;
  private readonly fetch: typeof fetch;

  constructor(options: HttpProviderOptions) {
    this.name = options.name;
    this.base = options.address.endsWith("/") ? options.address : `${options.address}/`;
    this.timeoutMs = options.timeoutMs;
    this.fetch = options.fetch ?? globalThis.fetch;
    const { auth } = options;
    if (auth?.kind === "bearer") this.authorization = `Bearer ${auth.token}`;
    else if (auth?.kind === "basic") {
      const pair = Buffer.from(`${auth.username}:${auth.password}`).toString("base64");
      this.authorization = `Basic ${pair}`;
    }
  }

  async grant(request: GrantRequest, signal: AbortSignal): Promise<GrantState> {
    const params = this.params(request);
    if (!params.ok) return params.denied;
    const answer = await this.send(
      "grant",
      { method: "POST", path: "v1/grants", body: permissionBody(request, params.value) },
      signal,
      { "idempotency-key": idempotencyKey(request, params.value) },
    );
    if (answer.status < 200 || answer.status > 299) return this.failure("grant", answer);
    return jobState("grant", answer.text);
  }

  async poll(request: GrantRequest, jobId: string, signal: AbortSignal): Promise<GrantState> {
    const params = this.params(request);
    if (!params.ok) return params.denied;
    const path = `v1/grants/${encodeURIComponent(jobId)}`;
    const answer = await this.send("poll", { method: "GET", path }, signal);
    if (answer.status === 404) {
      throw new GrantLostError(`poll: the authorization API does not know job ${jobId}`);
    }
    if (answer.status < 200 || answer.status > 299) return this.failure("poll", answer);
    return jobState("poll", answer.text);
  }

  async revoke(request: GrantRequest, signal: AbortSignal): Promise<void> {
    const params = this.params(request);
    // Params that can never have been granted leave nothing to revoke.
    if (!params.ok) return;
    const body = permissionBody(request, params.value);
    const answer = await this.send(
      "revoke",
      { method: "POST", path: "v1/revocations", body },
      signal,
    );
    if (answer.status === 404 || (answer.status >= 200 && answer.status <= 299)) return;
    const outcome = classifyFailure("revoke", answer);
    // A revoke the backend refuses outright will not succeed on retry either; the caller decides
    // (the finalizer path bounds its retries), so report it as an Error, not as transient.
    if ("transient" in outcome) throw outcome.transient;
    throw new Error(outcome.denied);
  }

  async close(): Promise<void> {}

  private params(request: GrantRequest) {
    const parsed = parseParams(httpParamsSchema, request.params);
    if (!parsed.ok) return parsed;
    if (isIP(request.ip) === 0) {
      const reason = `ip: must be an IPv4 or IPv6 address; got ${JSON.stringify(request.ip)}`;
      return { ok: false as const, denied: { state: "denied" as const, reason } };
    }
    return parsed;
  }

  private failure(what: string, answer: Answer): GrantState {
    const outcome = classifyFailure(what, answer);
    if ("transient" in outcome) throw outcome.transient;
    return { state: "denied", reason: outcome.denied };
  }

  private async send(
    what: string,
    request: { method: string; path: string; body?: unknown },
    caller: AbortSignal,
    extraHeaders: Record<string, string> = {},
  ): Promise<Answer> {
    const limit = deadline(caller, this.timeoutMs);
    const headers: Record<string, string> = { accept: "application/json", ...extraHeaders };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    if (this.authorization) headers.authorization = this.authorization;
    try {
      const response = await this.fetch(new URL(request.path, this.base), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: limit.signal,
        redirect: "error",
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      throw this.networkError(what, error, caller, limit);
    }
  }

  private networkError(
    what: string,
    error: unknown,
    caller: AbortSignal,
    limit: ReturnType<typeof deadline>,
  ): unknown {
    const aborted = abortError(caller, limit, what, this.timeoutMs);
    if (aborted !== undefined) return aborted;
    const cause = error instanceof Error ? error.cause : undefined;
    const code = errorCode(cause) ?? errorCode(error);
    const detail = code ?? errorText(cause ?? error);
    return new TransientProviderError(`${what}: cannot reach ${this.base}: ${detail}`);
  }
}
