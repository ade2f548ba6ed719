// One gRPC call from an HTTP/2 client stream to a gRPC backend over a multiplexed HTTP/2
// connection (sessions.ts). Messages flow both ways through pipes, so HTTP/2 flow control holds
// end to end: a client that does not read stops the backend's stream, and the gateway holds at
// most a stream buffer each way. Trailers (grpc-status, grpc-message, -bin metadata) are passed
// on as they came. When the gateway itself fails the call it answers a gRPC status: in a
// trailers-only response before the backend answered, in the trailers after.
import {
  constants,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { Endpoint } from "../../routing/table";
import { CONNECTION_SPECIFIC } from "../h2/request";
import type { UpstreamTls } from "../../routing/upstream";
import { RST, type GrpcSessions } from "./sessions";
import { GrpcCode, encodeGrpcMessage, grpcTimeoutMs, trailersOnly } from "./status";

export interface GrpcCallOptions {
  sessions: GrpcSessions;
  /** The endpoint to call; undefined when the route has none ready. */
  endpoint: Endpoint | undefined;
  tls: UpstreamTls | undefined;
  /** The :path sent upstream (rewrite applied). */
  path: string;
  /** Headers the gateway adds or replaces (X-Forwarded-For, X-Request-ID, X-Real-IP …). */
  added: OutgoingHttpHeaders;
  connectTimeoutMs: number;
  /** The longest the backend may stay silent (proxy-read-timeout, nginx's grpc_read_timeout). */
  readTimeoutMs: number;
}

/**
 * Fields that belong to one connection (RFC 9113 §8.2.2, the h2 front door's list), Host (sent
 * as :authority), TE (set to "trailers") and HTTP2-Settings: never copied.
 */
const NOT_FORWARDED: ReadonlySet<string> = new Set([
  ...CONNECTION_SPECIFIC,
  "host",
  "te",
  "http2-settings",
]);
/** The client's request headers as the backend gets them: `te: trailers`, as gRPC requires. */
export function upstreamGrpcHeaders(
  client: IncomingHttpHeaders,
  options: Pick<GrpcCallOptions, "path" | "added" | "tls">,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(client)) {
    if (name.startsWith(":") || NOT_FORWARDED.has(name) || value === undefined) continue;
    out[name] = value;
  }
  return {
    ...out,
    ...options.added,
    ":method": "POST",
    ":scheme": options.tls === undefined ? "http" : "https",
    ":authority": client[":authority"] ?? client.host ?? "",
    ":path": options.path,
    te: "trailers",
  };
}

/**
 * The gateway's upstream fields (a flat HTTP/1.1 list: the client's, edited, with X-Forwarded-*
 * and X-Request-ID) as HTTP/2 headers for a gRPC call: connection-specific fields left out, and
 * Host (upstream-vhost applied) as the :authority.
 */
export function grpcCallHeaders(flat: readonly string[]): {
  authority: string | undefined;
  headers: OutgoingHttpHeaders;
} {
  const headers: OutgoingHttpHeaders = {};
  let authority: string | undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!.toLowerCase();
    if (name === "host") authority = flat[i + 1];
    else if (!NOT_FORWARDED.has(name)) headers[name] = flat[i + 1];
  }
  return { authority, headers };
}

/** The backend's response headers or trailers for the client: pseudo-headers but :status dropped. */
function downstream(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if ((name.startsWith(":") && name !== ":status") || NOT_FORWARDED.has(name)) continue;
    if (value !== undefined) out[name] = value;
  }
  return out;
}

class GrpcCall {
  private upstream: ClientHttp2Stream | undefined = undefined;
  private trailers: OutgoingHttpHeaders | undefined = undefined;
  private release: () => void = () => undefined;
  private deadline: NodeJS.Timeout | undefined = undefined;
  /** The call's outcome is decided (passed on, failed or cancelled): nothing more is sent. */
  private done = false;

  constructor(
    private readonly client: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly options: GrpcCallOptions,
  ) {}

  start(): void {
    const { endpoint, sessions, tls } = this.options;
    if (endpoint === undefined) {
      this.fail(GrpcCode.UNAVAILABLE, "no ready endpoint for this route");
      return;
    }
    const asked = this.headers["grpc-timeout"];
    const timeout = grpcTimeoutMs(typeof asked === "string" ? asked : undefined);
    if (timeout !== undefined) {
      this.deadline = setTimeout(
        () => this.fail(GrpcCode.DEADLINE_EXCEEDED, "deadline exceeded at the gateway"),
        timeout,
      );
    }
    const { session, release } = sessions.acquire(endpoint, tls, this.options.connectTimeoutMs);
    this.release = release;
    const upstream = session.request(upstreamGrpcHeaders(this.headers, this.options), {
      endStream: false,
      waitForTrailers: false,
    });
    this.upstream = upstream;
    upstream.setTimeout(this.options.readTimeoutMs, () =>
      this.fail(
        GrpcCode.DEADLINE_EXCEEDED,
        `the backend sent nothing for ${this.options.readTimeoutMs} ms`,
      ),
    );
    upstream.on("response", this.onResponse);
    upstream.on(
      "trailers",
      (trailers: IncomingHttpHeaders) => (this.trailers = downstream(trailers)),
    );
    upstream.on("error", (error: Error) =>
      this.fail(GrpcCode.UNAVAILABLE, `backend: ${error.message}`),
    );
    upstream.on("close", this.onUpstreamClose);
    this.client.on("close", this.onClientClose);
    this.client.on("error", () => undefined);
    this.client.pipe(upstream);
  }

  private readonly onResponse = (headers: IncomingHttpHeaders, flags: number): void => {
    if (this.done || this.client.destroyed) return;
    const endsStream = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    if (endsStream) {
      // Trailers-only from the backend: passed on as it came.
      this.client.respond(downstream(headers), { endStream: true });
      this.finish();
      return;
    }
    this.client.respond(downstream(headers), { waitForTrailers: true });
    // Node's compatibility response (the gateway's h2 requests come through it) answers
    // wantTrailers with its own, empty, trailers: the backend's must be the ones sent.
    this.client.removeAllListeners("wantTrailers");
    this.client.once("wantTrailers", this.sendTrailers);
    this.upstream!.pipe(this.client);
  };

  private readonly sendTrailers = (): void => {
    this.finish();
    const trailers = this.trailers ?? {
      "grpc-status": String(GrpcCode.INTERNAL),
      "grpc-message": encodeGrpcMessage("the backend ended the call without a status"),
    };
    if (!this.client.destroyed) this.client.sendTrailers(trailers);
  };

  /** The backend's stream closed: a clean end was handled by the pipe; a reset fails the call. */
  private readonly onUpstreamClose = (): void => {
    const code = this.upstream?.rstCode ?? 0;
    if (code !== constants.NGHTTP2_NO_ERROR && !this.done) {
      this.fail(GrpcCode.UNAVAILABLE, `the backend reset the stream (HTTP/2 error ${code})`);
    }
    this.release();
  };

  /** The client went away or cancelled: the backend's call is cancelled too. */
  private readonly onClientClose = (): void => {
    if (!this.done && this.upstream !== undefined && !this.upstream.destroyed) {
      this.upstream.close(RST.CANCEL);
    }
    this.finish();
  };

  /** The gateway's own status: trailers-only before the backend answered, else the trailers. */
  private fail(code: GrpcCode, message: string): void {
    if (this.done) return;
    const upstream = this.upstream;
    if (upstream !== undefined && !upstream.destroyed) {
      upstream.unpipe(this.client);
      upstream.close(RST.CANCEL);
    }
    const client = this.client;
    if (client.destroyed || client.closed) {
      this.finish();
      return;
    }
    if (!client.headersSent) {
      client.respond(trailersOnly(code, message), { endStream: true });
      this.finish();
      return;
    }
    this.trailers = { "grpc-status": String(code), "grpc-message": encodeGrpcMessage(message) };
    this.done = true;
    clearTimeout(this.deadline);
    // wantTrailers fires once the data written so far is out, and sends these trailers.
    client.end();
  }

  private finish(): void {
    this.done = true;
    clearTimeout(this.deadline);
  }
}

/** Forwards one gRPC call; everything after is driven by the two streams' events. */
export function forwardGrpc(
  client: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  options: GrpcCallOptions,
): void {
  new GrpcCall(client, headers, options).start();
}
