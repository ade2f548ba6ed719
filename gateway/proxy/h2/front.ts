// HTTP/2 on the HTTPS listener, and h2c on the HTTP port when turned on. The TLS listener
// (tls/listener.ts) negotiates ALPN and hands a socket that chose "h2" here, the HTTP port one that
// began with the client preface (cleartext.ts); one node:http2 server (never listening itself) runs its sessions,
// with every limit set here rather than left to Node's defaults. Each request stream is offered
// to `onStream` first (the engine's raw-pool path, exchange.ts); a stream it does not take gets
// Node's compatibility shape (Http2ServerRequest/Response), made by Node's own code on a second
// server that only does that, and goes to `onRequest`, which the engine's Node path serves like
// an HTTP/1.1 request. What reaches an upstream is decided there; this module only speaks HTTP/2
// to the client.
import {
  constants,
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from "node:http2";
import type { Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { sharePeerAddress } from "../proxy-protocol";
import { ResetBudget } from "./reset-budget";

/** What the h2 front needs from the front door's settings. */
export interface H2Limits {
  /** Largest header list (SETTINGS_MAX_HEADER_LIST_SIZE): the HTTP/1.1 head limit. */
  maxHeadBytes: number;
  /** A stream whose body stalls, or whose client stops reading, this long is reset. */
  bodyTimeoutMs: number;
  /** A connection with no frame either way for this long is closed (nginx keepalive_timeout). */
  idleMs: number;
}

/** nginx's http2_max_concurrent_streams. */
export const MAX_CONCURRENT_STREAMS = 128;

/** The server's limits, all of them explicit (Node's defaults change between releases). */
export function h2ServerOptions(limits: H2Limits) {
  return {
    settings: {
      maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
      // The HPACK table a client may make us keep: RFC 9113's default, no more.
      headerTableSize: 4096,
      // Per stream: what a client that never reads makes us buffer, and what it may send ahead.
      initialWindowSize: 65_535,
      maxFrameSize: 16_384,
      maxHeaderListSize: limits.maxHeadBytes,
      enablePush: false,
      // No extended CONNECT (RFC 8441): WebSockets stay on HTTP/1.1.
      enableConnectProtocol: false,
    },
    // Fields per header list, pseudo-headers included; the size limit above is the real bound.
    maxHeaderListPairs: 512,
    // MB of nghttp2 memory per session (headers, queued frames); past it new streams are refused.
    maxSessionMemory: 10,
    // A PING/SETTINGS flood: unanswered pings and queued SETTINGS beyond these end the session.
    maxOutstandingPings: 10,
    maxSettings: 32,
    // Frames nghttp2 rejects as invalid, streams it refuses (over the limit): then the session ends.
    maxSessionInvalidFrames: 100,
    maxSessionRejectedStreams: 100,
    maxSendHeaderBlockLength: 64 * 1024,
    peerMaxConcurrentStreams: MAX_CONCURRENT_STREAMS,
    unknownProtocolTimeout: 10_000,
  };
}

/** A request stream's header list, and the connection it came on. */
export interface H2StreamHead {
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  /** Its session's connection: the client's address, the listener's port. */
  socket: Socket;
  proto: "http" | "https";
}

export interface H2FrontOptions {
  limits: H2Limits;
  /**
   * A new request stream, before anything else sees it: true when taken (served without the
   * compatibility layer). `socket` is its session's connection (the client's address).
   */
  onStream?(stream: ServerHttp2Stream, head: H2StreamHead): boolean;
  /**
   * One request stream (its `socket` tells the client's address, as on HTTP/1.1); `proto` is the
   * listener's: "https" for h2, "http" for h2c.
   */
  onRequest(req: Http2ServerRequest, res: Http2ServerResponse, proto: "http" | "https"): void;
  /** A session closed for abuse (rapid reset); for the counters. */
  onAbuse(reason: "h2-rapid-reset"): void;
}

export class H2Front {
  private readonly server: Http2Server;
  /** Makes the compatibility request and response of a stream `onStream` did not take. */
  private readonly compat: Http2Server;
  private readonly sessions = new Set<ServerHttp2Session>();
  /** The socket whose session node:http2 is creating (the 'session' event is synchronous). */
  private arriving: Socket | undefined = undefined;
  private readonly sockets = new WeakMap<ServerHttp2Session, Socket>();

  constructor(private readonly options: H2FrontOptions) {
    this.server = createServer(h2ServerOptions(options.limits));
    this.server.on("session", (session: ServerHttp2Session) => this.watch(session));
    this.server.on(
      "stream",
      (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) =>
        this.onStream(stream, headers, flags, raw),
    );
    this.compat = createServer();
    this.compat.on("request", (req: Http2ServerRequest, res: Http2ServerResponse) => {
      // With the PROXY protocol, the header's source is the client of every stream.
      const socket = this.sockets.get(req.stream.session as ServerHttp2Session);
      if (socket !== undefined) sharePeerAddress(socket, req.socket);
      this.options.onRequest(req, res, socket instanceof TLSSocket ? "https" : "http");
    });
  }

  private onStream(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    flags: number,
    rawHeaders: string[],
  ): void {
    const socket = this.sockets.get(stream.session as ServerHttp2Session);
    // A stream reset on arrival is left to the Node path, which records it as abandoned.
    const open = !stream.closed && !stream.destroyed && socket !== undefined;
    if (open) {
      const proto = socket instanceof TLSSocket ? "https" : "http";
      if (this.options.onStream?.(stream, { headers, rawHeaders, socket, proto }) === true) return;
    }
    // Node's own stream-to-request code (with its Expect handling) runs on the compat server.
    this.compat.emit("stream", stream, headers, flags, rawHeaders);
  }

  /**
   * Serves a TLS socket whose handshake chose "h2", or a plain one that began with the client
   * preface (h2c prior knowledge, its bytes put back).
   */
  accept(socket: Socket): void {
    // Node's HTTP/2 session waits for 'secureConnect' while this flag is set, an event only
    // client sockets emit; a server socket made outside a tls.Server keeps it after its handshake.
    if (socket instanceof TLSSocket) {
      (socket as TLSSocket & { secureConnecting: boolean }).secureConnecting = false;
    }
    this.arriving = socket;
    try {
      this.server.emit("connection", socket);
    } finally {
      this.arriving = undefined;
    }
  }

  /** Sessions with no stream in flight close now; the others get GOAWAY and finish what they have. */
  closeIdle(): void {
    for (const session of this.sessions) if (!session.closed) session.close();
  }

  /** Every session, at once. */
  destroy(): void {
    for (const session of this.sessions) session.destroy();
  }

  private watch(session: ServerHttp2Session): void {
    const socket = this.arriving;
    this.sessions.add(session);
    session.once("close", () => this.sessions.delete(session));
    // Errors end the session; they are the client's (a protocol error, a reset connection).
    session.on("error", () => session.destroy());
    session.setTimeout(this.options.limits.idleMs, () => {
      // Frames still queued after an idle period: the client reads nothing (and Node has stopped
      // reading it meanwhile), so no GOAWAY would reach it either.
      if (session.state.outboundQueueSize !== undefined && session.state.outboundQueueSize > 0) {
        session.destroy();
        return;
      }
      // GOAWAY: streams in flight may finish; a stalled one is reset by its own timeout.
      session.close();
    });
    const budget = new ResetBudget(2 * MAX_CONCURRENT_STREAMS);
    session.on("stream", (stream: ServerHttp2Stream) => {
      this.watchStream(stream);
      const cancelled = () => {
        if (budget.cancelled() || session.destroyed) return;
        this.options.onAbuse("h2-rapid-reset");
        session.destroy(new Error("rapid reset"), constants.NGHTTP2_ENHANCE_YOUR_CALM);
      };
      // HEADERS and RST_STREAM read in one go (h2c's first bytes, a large read) close the stream
      // before it is announced here, and no 'aborted' follows: it counts as cancelled all the same.
      // (Destroyed from inside nghttp2's reading, the session may say INTERNAL_ERROR first, as
      // nghttp2's own reset limit does past 1000 resets in one read.)
      if (resetOnArrival(stream)) cancelled();
      else stream.once("aborted", cancelled);
      stream.once("close", () => {
        if (stream.rstCode === constants.NGHTTP2_NO_ERROR) budget.answered();
      });
    });
    if (socket !== undefined) this.sockets.set(session, socket);
  }

  /**
   * A stream that makes no progress for the body timeout while its request body is still due,
   * or while its answer waits for the client to read, is reset (CANCEL). A stream only waiting
   * for its upstream is left to the route's read timeout.
   */
  private watchStream(stream: ServerHttp2Stream): void {
    const timeoutMs = this.options.limits.bodyTimeoutMs;
    const onTimeout = () => {
      // A body is due until read to its end (a request without one ended with its HEADERS).
      const bodyDue = !stream.endAfterHeaders && !stream.readableEnded;
      const stalled = bodyDue || stream.writableNeedDrain;
      if (stalled) stream.close(constants.NGHTTP2_CANCEL);
      else stream.setTimeout(timeoutMs, onTimeout);
    };
    stream.setTimeout(timeoutMs, onTimeout);
  }
}

/** The client reset the stream before it was announced (it is closed, and not cleanly). */
function resetOnArrival(stream: ServerHttp2Stream): boolean {
  return (
    stream.closed && stream.rstCode !== undefined && stream.rstCode !== constants.NGHTTP2_NO_ERROR
  );
}
