// HTTP/2 connections to gRPC backends (backend-protocol GRPC: h2c; GRPCS: h2 over TLS with the
// route's upstream-TLS settings). Calls are multiplexed over a bounded number of connections per
// endpoint: a call takes the least busy live connection with room under the backend's
// SETTINGS_MAX_CONCURRENT_STREAMS, a new one while under the bound, else the least busy anyway
// (nghttp2 queues streams over the peer's limit until one ends).
import {
  connect,
  constants,
  type ClientHttp2Session,
  type SecureClientSessionOptions,
} from "node:http2";
import type { Endpoint } from "../../routing/table";
import { poolKey, type UpstreamTls } from "../../routing/upstream";

export interface GrpcSessionOptions {
  /** Connections per endpoint (and TLS identity). */
  maxSessionsPerEndpoint: number;
  /** A connection with no call open this long is closed. */
  idleMs: number;
  /** The most bytes a connection may hold in flight, in MB (Node's maxSessionMemory). */
  maxSessionMemoryMb: number;
}

export const DEFAULT_GRPC_SESSIONS: GrpcSessionOptions = {
  maxSessionsPerEndpoint: 4,
  idleMs: 60_000,
  maxSessionMemoryMb: 32,
};

interface Tracked {
  readonly session: ClientHttp2Session;
  /** Calls open on it. */
  open: number;
}

function authorityOf(endpoint: Endpoint, tls: UpstreamTls | undefined): string {
  const host = endpoint.address.includes(":") ? `[${endpoint.address}]` : endpoint.address;
  return `${tls === undefined ? "http" : "https"}://${host}:${endpoint.port}`;
}

export class GrpcSessions {
  private readonly pools = new Map<string, Tracked[]>();

  constructor(private readonly options: GrpcSessionOptions = DEFAULT_GRPC_SESSIONS) {}

  /**
   * A connection for one call to `endpoint`; `release` must be called once when the call ends.
   * A connection that does not connect within `connectTimeoutMs` is destroyed, failing its calls.
   */
  acquire(
    endpoint: Endpoint,
    tls: UpstreamTls | undefined,
    connectTimeoutMs: number,
  ): { session: ClientHttp2Session; release: () => void } {
    const key = poolKey(endpoint.key, tls);
    const pool = this.pools.get(key) ?? [];
    this.pools.set(key, pool);
    const tracked =
      this.choose(pool) ??
      this.open({ key, pool }, authorityOf(endpoint, tls), tls, connectTimeoutMs);
    tracked.open++;
    tracked.session.ref();
    let released = false;
    return {
      session: tracked.session,
      release: () => {
        if (released) return;
        released = true;
        tracked.open--;
        // An idle connection must not keep a stopping process alive.
        if (tracked.open === 0) tracked.session.unref();
      },
    };
  }

  /** Open connections, for tests and status. */
  count(endpoint: Endpoint, tls?: UpstreamTls): number {
    return this.pools.get(poolKey(endpoint.key, tls))?.length ?? 0;
  }

  closeAll(): void {
    for (const pool of this.pools.values()) for (const t of pool) t.session.destroy();
    this.pools.clear();
  }

  private choose(pool: Tracked[]): Tracked | undefined {
    let best: Tracked | undefined;
    for (const t of pool) {
      if (t.session.closed || t.session.destroyed) continue;
      if (best === undefined || t.open < best.open) best = t;
    }
    if (best === undefined) return undefined;
    const room = best.session.remoteSettings.maxConcurrentStreams ?? 100;
    return best.open < room || pool.length >= this.options.maxSessionsPerEndpoint
      ? best
      : undefined;
  }

  private open(
    { key, pool }: { key: string; pool: Tracked[] },
    authority: string,
    tls: UpstreamTls | undefined,
    connectTimeoutMs: number,
  ): Tracked {
    const options: SecureClientSessionOptions = {
      ...(tls?.options ?? {}),
      ALPNProtocols: ["h2"],
      maxSessionMemory: this.options.maxSessionMemoryMb,
      settings: { enablePush: false },
    };
    const session = connect(authority, options);
    const tracked: Tracked = { session, open: 0 };
    pool.push(tracked);
    const forget = () => {
      const at = pool.indexOf(tracked);
      if (at >= 0) pool.splice(at, 1);
      // Endpoints come and go: an empty pool goes with its last connection.
      if (pool.length === 0 && this.pools.get(key) === pool) this.pools.delete(key);
    };
    const connectTimer = setTimeout(
      () => session.destroy(new Error(`connect timed out after ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    session.once("connect", () => clearTimeout(connectTimer));
    session.once("close", () => {
      clearTimeout(connectTimer);
      forget();
    });
    // A GOAWAY: no new calls on it; the calls it carries finish or fail on their own.
    session.once("goaway", forget);
    // Errors reach the calls through their streams; the session's own is only logged by them.
    session.on("error", () => forget());
    session.setTimeout(this.options.idleMs, () => {
      if (tracked.open === 0) session.close();
    });
    return tracked;
  }
}

/** RST_STREAM codes the forwarder sends. */
export const RST = {
  CANCEL: constants.NGHTTP2_CANCEL,
  INTERNAL: constants.NGHTTP2_INTERNAL_ERROR,
} as const;
