// Upstream connections of the fast path and their keep-alive pools, one per endpoint and TLS
// identity (a verified and an unverified connection to one address never share a socket). A
// connection gets its listeners once, when it is made, and forwards events to whichever exchange
// owns it, so a request costs no closures.
import { connect, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import type { Endpoint } from "../../routing/table";
import { poolKey, reportTlsFailure, type UpstreamTls } from "../../routing/upstream";
import { UpstreamTimeout } from "../retry-rules";
import { IdleTimer } from "./idle-timer";

/** What an upstream connection reports to the exchange that owns it. */
export interface UpstreamOwner {
  onUpstreamConnect(): void;
  /**
   * Bytes the upstream sent. On a plain connection they are a view of the connection's read
   * buffer, which the next read overwrites: true means they are still referenced after the call
   * (a write not yet flushed, a head kept for its rest), and the next read gets a new buffer.
   */
  onUpstreamData(data: Buffer): boolean;
  onUpstreamDrain(): void;
  /** The connection ended, failed or timed out; `error` says why when it was not a clean close. */
  onUpstreamGone(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): void;
}

/** Idle upstream connections close after this (ingress-nginx: upstream-keepalive-timeout 60 s). */
const IDLE_MS = 60_000;
/** Idle connections kept per endpoint (ingress-nginx: upstream-keepalive-connections 320). */
const MAX_IDLE = 320;
/**
 * A plain connection's read buffer: this much to start with and while idle (most answers come
 * in one read of it); a read that fills it doubles it for the next one, up to the most. (nginx
 * reads a response into proxy_buffer_size, 4 or 8 KiB, taken per request.)
 */
const READ_BYTES = 16 * 1024;
const MAX_READ_BYTES = 64 * 1024;

export class UpstreamConnection {
  owner: UpstreamOwner | undefined = undefined;
  connected = false;
  /** It served a response before: a failure may just be the upstream closing an idle connection. */
  reused = false;
  private gone = false;
  /** The connect, send, read or idle timeout, whichever applies now. */
  private readonly idle: IdleTimer;
  /**
   * Where a plain connection's reads land (Node's onread: no stream machinery per read). The
   * owner sees a view of it; when the owner keeps that view, the next read gets a new buffer.
   */
  private readBuffer: Buffer | undefined = undefined;
  private readKept = false;
  private readFilled = false;
  readonly socket: Socket;

  constructor(
    readonly endpoint: Endpoint,
    private readonly pool: UpstreamPool,
    connectTimeoutMs: number,
    private readonly tls?: { key: string; settings: UpstreamTls },
  ) {
    const target = { host: endpoint.address, port: endpoint.port, noDelay: true };
    // Writes before the handshake ends wait in the TLS socket; "connected" means handshake done.
    const socket =
      tls === undefined
        ? connect({ ...target, onread: { buffer: this.nextReadBuffer, callback: this.onRead } })
        : connectTls({ ...target, ...tls.settings.options });
    if (tls !== undefined) {
      socket.setNoDelay(true);
      socket.on("data", (data: Buffer) => this.deliver(data));
    }
    this.socket = socket;
    this.idle = new IdleTimer(
      () => this.fail(new UpstreamTimeout(this.connected)),
      () => socket.writableLength,
    );
    this.idle.set(connectTimeoutMs);
    socket.on(tls === undefined ? "connect" : "secureConnect", () => {
      this.connected = true;
      this.owner?.onUpstreamConnect();
    });
    socket.on("drain", () => {
      this.idle.touch();
      this.owner?.onUpstreamDrain();
    });
    socket.on("error", (error: Error) => this.fail(error));
    socket.on("close", () => this.fail(undefined));
  }

  private readonly onRead = (bytes: number, buffer: Uint8Array): boolean => {
    this.readFilled = bytes === buffer.length;
    this.readKept = this.deliver(this.readBuffer!.subarray(0, bytes));
    return true; // an owner that wants no more pauses the socket itself
  };

  /** The buffer the next read lands in (Node asks before the first read and after each). */
  private readonly nextReadBuffer = (): Buffer => {
    const current = this.readBuffer;
    let size = current?.length ?? READ_BYTES;
    if (this.owner === undefined) size = READ_BYTES;
    else if (this.readFilled) size = Math.min(size * 2, MAX_READ_BYTES);
    if (current === undefined || this.readKept || size !== current.length)
      this.readBuffer = Buffer.allocUnsafeSlow(size);
    this.readKept = false;
    return this.readBuffer!;
  };

  /** Whether the owner kept the bytes; an idle connection must not speak. */
  private deliver(data: Buffer): boolean {
    this.idle.touch();
    if (this.owner !== undefined) return this.owner.onUpstreamData(data);
    this.socket.destroy();
    return false;
  }

  /** The pool list it idles in: its endpoint's, or its endpoint's with its TLS identity. */
  get poolKey(): string {
    return this.tls?.key ?? this.endpoint.key;
  }

  private fail(error: (Error & { code?: string }) | undefined): void {
    if (this.gone) return;
    this.gone = true;
    this.idle.stop();
    if (this.tls !== undefined && !this.connected && error !== undefined)
      reportTlsFailure(this.endpoint.key, this.tls.settings, error);
    this.socket.destroy();
    this.pool.forget(this);
    const owner = this.owner;
    this.owner = undefined;
    owner?.onUpstreamGone(this, error);
  }

  /**
   * Writes to the upstream; false when the bytes wait in the socket ("drain" follows). Every
   * write goes through here: a write is activity for the send timeout.
   */
  send(data: Buffer | string, encoding?: "latin1"): boolean {
    const fits =
      encoding === undefined ? this.socket.write(data) : this.socket.write(data, encoding);
    this.idle.touch();
    // What waits unwritten now (before the connection is made, every write waits whole): only
    // a change from this is the queue moving.
    this.idle.queued(this.socket.writableLength);
    return fits;
  }

  /** The inactivity timeout from now on: the connect, send, read or idle timeout. */
  setTimeout(ms: number): void {
    this.idle.set(ms);
  }

  get alive(): boolean {
    return !this.gone;
  }
}

/** Idle connections per endpoint, most recently used first out. */
export class UpstreamPool {
  private readonly idle = new Map<string, UpstreamConnection[]>();

  acquire(
    endpoint: Endpoint,
    owner: UpstreamOwner,
    connectTimeoutMs: number,
    tls?: UpstreamTls,
  ): UpstreamConnection {
    const key = tls === undefined ? endpoint.key : poolKey(endpoint.key, tls);
    const list = this.idle.get(key);
    let connection = list?.pop();
    while (connection !== undefined && !connection.alive) connection = list?.pop();
    connection ??= new UpstreamConnection(
      endpoint,
      this,
      connectTimeoutMs,
      tls === undefined ? undefined : { key, settings: tls },
    );
    connection.owner = owner;
    return connection;
  }

  release(connection: UpstreamConnection): void {
    connection.owner = undefined;
    connection.reused = true;
    if (!connection.alive) return;
    const key = connection.poolKey;
    let list = this.idle.get(key);
    if (list === undefined) {
      list = [];
      this.idle.set(key, list);
    }
    if (list.length >= MAX_IDLE) {
      connection.socket.destroy();
      return;
    }
    connection.setTimeout(IDLE_MS);
    list.push(connection);
  }

  forget(connection: UpstreamConnection): void {
    const key = connection.poolKey;
    const list = this.idle.get(key);
    if (list === undefined) return;
    const index = list.indexOf(connection);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.idle.delete(key);
  }

  /** Closes idle connections whose pool key is not in `live` (all of them when undefined). */
  closeIdle(live?: ReadonlySet<string>): void {
    for (const [key, list] of this.idle) {
      if (live?.has(key) === true) continue;
      for (const connection of [...list]) connection.socket.destroy();
    }
  }
}
