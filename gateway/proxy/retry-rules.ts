// When a failed upstream attempt may be tried on another endpoint, for both request paths: only
// requests that are safe to repeat, and only failures where the request never reached the
// upstream application.

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "BWK_CONNECT_TIMEOUT",
]);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/** Whether an error code means the connection to the upstream was never made. */
export function isConnectFailure(code: string | undefined): boolean {
  return CONNECT_FAILURES.has(code ?? "");
}
