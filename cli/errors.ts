// One line for any error the CLI meets: what the person at the terminal needs to act on it.
// Pepr's fluent client rejects with plain objects ({status, statusText, data}), client-node with
// ApiException (code, body), fetch with a TypeError whose cause holds the socket error: printed
// as they are, they read "[object Object]" or "fetch failed".

interface FluentFailure {
  status?: unknown;
  statusText?: unknown;
  data?: unknown;
  /** The thrown error under a network failure, which the client reports as status 400. */
  e?: unknown;
}

function apiMessage(data: unknown): string | undefined {
  const parsed = typeof data === "string" ? safeJson(data) : data;
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

/** The socket-level reason under a fetch failure ("connect ECONNREFUSED 127.0.0.1:6443"). */
function causeOf(error: Error): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message || (cause as { code?: string }).code;
  return undefined;
}

function describeThrown(error: Error): string {
  const body = apiMessage((error as { body?: unknown }).body);
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
  const message = apiMessage(failure.data);
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

export function describeError(error: unknown): string {
  if (error instanceof Error) return describeThrown(error);
  if (typeof error === "object" && error !== null) return describeObject(error);
  return String(error);
}
