// The contract between the permission server's job runner and the authorization backends.
// A provider grants one permission for one pod IP, asynchronously: `grant` starts it (or finds it
// already done) and `poll` follows it to an end. Both are idempotent: the runner may call them
// again after a crash, a timeout or a retry, and the backend must end up in the same state.

export interface GrantRequest {
  /** The pod's UID: idempotency key, together with the permission's index in its group. */
  podUid: string;
  namespace: string;
  pod: string;
  ip: string;
  /** The PermissionGroup's name and the permission's params, as validated at admission. */
  group: string;
  params: Record<string, unknown>;
}

/** A revoke: the grant to undo, and what other pods still hold at the same IP through it. */
export interface RevokeRequest extends GrantRequest {
  /**
   * The params other pods' ledgers hold at this IP through this provider, read fresh when
   * called. A provider whose grants share backend state per IP (the MySQL account) calls it
   * after locking that state, so a grant to a new pod at the IP is either seen or runs after.
   */
  stillHeld(): Promise<readonly Record<string, unknown>[]>;
}

/** A grant in flight or ended. `jobId` is the backend's handle, kept in the grant record. */
export type GrantState =
  | { state: "pending"; jobId: string }
  | { state: "granted"; jobId: string }
  /** Definitive: retrying the same request cannot succeed (bad params, denied by policy). */
  | { state: "denied"; jobId?: string; reason: string };

/** A failure worth retrying (timeout, 5xx, 429, connection refused); anything else is a bug. */
export class TransientProviderError extends Error {
  constructor(
    message: string,
    /** The backend asked to wait this long (Retry-After), when it said so. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "TransientProviderError";
  }
}

export interface Provider {
  /** PermissionProvider name (cluster-scoped object), used in logs, metrics and records. */
  readonly name: string;
  grant(request: GrantRequest, signal: AbortSignal): Promise<GrantState>;
  poll(request: GrantRequest, jobId: string, signal: AbortSignal): Promise<GrantState>;
  /**
   * Removes what grant created for this pod and IP, leaving what `stillHeld` says other pods
   * hold; absent already is success.
   */
  revoke(request: RevokeRequest, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}
