// How an upstream attempt failed, and when it may be tried on another endpoint, for both request
// paths: only requests that are safe to repeat, and only failures where the request never reached
// the upstream application. The gateway's own timeouts are error codes beside Node's, so one
// `code` check classifies every failure.

export const CONNECT_TIMEOUT = "BWK_CONNECT_TIMEOUT";
export const READ_TIMEOUT = "BWK_READ_TIMEOUT";

/** The gateway gave up on the upstream: before the connection was made, or while waiting on it. */
export class UpstreamTimeout extends Error {
  readonly code: typeof CONNECT_TIMEOUT | typeof READ_TIMEOUT;
  constructor(connected: boolean) {
    super(connected ? "upstream timed out" : "upstream connect timed out");
    this.code = connected ? READ_TIMEOUT : CONNECT_TIMEOUT;
  }
}

/** Whether an error code is one of the gateway's upstream timeouts (answered 504, not 502). */
export function isUpstreamTimeout(code: string | undefined): boolean {
  return code === READ_TIMEOUT || code === CONNECT_TIMEOUT;
}

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  CONNECT_TIMEOUT,
]);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/** Whether an error code means the connection to the upstream was never made. */
export function isConnectFailure(code: string | undefined): boolean {
  return CONNECT_FAILURES.has(code ?? "");
}
