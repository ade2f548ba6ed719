// What went wrong in a call to the API server, whichever client made it. Three clients answer in
// three shapes: Pepr's fluent client rejects with plain objects ({status, statusText, data}, the
// thrown error under `e` on a network failure), client-node with ApiException (`code`, `body`),
// older client-node and Node's own errors with `statusCode`; fetch rejects with a TypeError whose
// `cause` holds the socket error. Printed as they are, they read "[object Object]" or "fetch failed".
// Pepr-free: the workloads, the CLI and the module all read errors here.

interface FluentFailure {
  status?: unknown;
  statusText?: unknown;
  data?: unknown;
  /** The thrown error under a network failure, which the fluent client reports as status 400. */
  e?: unknown;
}

/** The HTTP status of a client error, when it has one. */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, status, statusCode } = error as Record<string, unknown>;
  for (const candidate of [code, status, statusCode]) {
    if (typeof candidate === "number") return candidate;
  }
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusOf(error) === 404;
/** 409: a precondition (resourceVersion) failed, or the object already exists. */
export const isConflict = (error: unknown): boolean => statusOf(error) === 409;
export const isInvalid = (error: unknown): boolean => statusOf(error) === 422;

/** The `message` of a Status body (object or JSON text), when there is one. */
function statusMessage(body: unknown): string | undefined {
  const parsed = typeof body === "string" ? safeJson(body) : body;
  const message = (parsed as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && message !== "" ? message : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text === "" ? undefined : { message: text };
  }
}

/** The API server's own message when there is one, else the error's text: for "reading X: …". */
export function apiMessage(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { body, data } = error as { body?: unknown; data?: unknown };
    const message = statusMessage(body) ?? statusMessage(data);
    if (message) return message;
  }
  return error instanceof Error ? error.message : describeError(error);
}

/** The socket-level reason under a fetch failure ("connect ECONNREFUSED 127.0.0.1:6443"). */
function causeOf(error: Error): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message || (cause as { code?: string }).code;
  return undefined;
}

function describeThrown(error: Error): string {
  const body = statusMessage((error as { body?: unknown }).body);
  const code = (error as { code?: unknown }).code;
  if (body) return typeof code === "number" ? `HTTP ${code}: ${body}` : body;
  const cause = causeOf(error);
  if (cause && !error.message.includes(cause)) {
    return `${error.message}: ${cause} (is the API server in your kubeconfig reachable?)`;
  }
  return error.message;
}

function describeObject(error: object): string {
  const failure = error as FluentFailure;
  if (failure.e instanceof Error) return describeThrown(failure.e);
  const status = typeof failure.status === "number" ? failure.status : undefined;
  const text = typeof failure.statusText === "string" ? failure.statusText : "";
  const message = statusMessage(failure.data);
  if (status !== undefined || message !== undefined) {
    const head = status === undefined ? "" : `HTTP ${status}${text ? ` ${text}` : ""}`;
    return [head, message].filter(Boolean).join(": ");
  }
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** One line for any error: what a person reading it needs to act on it (status, message, cause). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return describeThrown(error);
  if (typeof error === "object" && error !== null) return describeObject(error);
  return String(error);
}
