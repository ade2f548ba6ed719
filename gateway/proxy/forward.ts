// One proxied HTTP exchange: route on the request head, pick an endpoint round-robin, stream the
// request up and the response down (pipe, so backpressure holds both ways), retry an idempotent
// request without body on a connect failure, answer 502/504/413 itself.
import { request, type ClientRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as requestTls } from "node:https";
import type { Socket } from "node:net";
import type { Bandwidth } from "../../core/annotations";
import type { ExchangeTally } from "../observability/tally";
import { BODY_HEADERS, errorHeaders, errorTarget, type ErrorPages } from "../policy/error-pages";
import { editFlatHeaders, withoutFlatHeaders, type HeaderEdits } from "../policy/head-edits";
import type { Endpoint, Route } from "../routing/table";
import { EWMA_STATS } from "../routing/balance";
import { withStickyCookie, type StickyChoice } from "../policy/affinity";
import { reportTlsFailure, type UpstreamTls } from "../routing/upstream";
import { downstreamResponseHeaders } from "./headers";
import { relayableTrailers } from "./h2/trailers";
import { PacedBody } from "./paced-body";
import type { UpstreamPools } from "./pools";
import { cutShort, reply } from "./replies";
import { isConnectFailure, isIdempotent, isUpstreamTimeout, UpstreamTimeout } from "./retry-rules";

/** Counters the data plane reports; incremented in place. */
export interface ProxyCounters {
  requests: number;
  retries: number;
  upstreamErrors: number;
  timeouts: number;
  /** Requests the front door refused, by reason (request-rules.ts). */
  refused: Record<string, number>;
}

export interface ExchangeContext {
  headers: string[];
  pools: UpstreamPools;
  counters: ProxyCounters;
  /** The request target sent upstream (rewrite-target and canary query actions applied). */
  target: string;
  /** The traffic policy's response header edits; undefined for none. */
  response: HeaderEdits | undefined;
  /** custom-http-errors; undefined for none. */
  errorPages?: ErrorPages | undefined;
  /** The response edits for an answer of this status, when they depend on it (auth-url's Set-Cookie). */
  responseFor?: (status: number) => HeaderEdits | undefined;
  tally: ExchangeTally | undefined;
  /** TLS towards the backend (backend-protocol HTTPS); undefined: plain HTTP. */
  tls: UpstreamTls | undefined;
  /** upstream-hash-by's key for this request; absent when the route does not hash. */
  hashKey?: string;
  /** limit-rate: the response body's pace; absent when it is not paced. */
  bandwidth?: Bandwidth | undefined;
  /** affinity: chooses the endpoint of each try and the cookie to set; absent without. */
  sticky?: StickyChoice;
  /**
   * A body of no declared length follows: an HTTP/2 stream's DATA without content-length (an
   * HTTP/1.1 request says so with Transfer-Encoding, which this also covers).
   */
  streamedBody?: boolean;
  /**
   * An HTTP/2 client said `TE: trailers`: the upstream's trailer fields (allowed ones only) end
   * the answer as a trailing HEADERS frame (h2/trailers.ts).
   */
  relayTrailers?: boolean;
}

export class Exchange {
  private tries = 0;
  private upstream: ClientRequest | undefined = undefined;
  private endpoint: Endpoint | undefined = undefined;
  /** When the request went to an ewma route's endpoint (performance.now()); -1 otherwise. */
  private sentAt = -1;
  private responded = false;
  /** The upstream's answer has come to its end (the client may still be reading it). */
  private bodyDone = false;
  private connected = false;
  private bodyStarted = false;
  private readonly retryable: boolean;
  /** The request goes up without its body (to the error backend, which is asked after it was sent). */
  private bodyless = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private route: Route,
    private context: ExchangeContext,
  ) {
    this.retryable = isIdempotent(req.method ?? "") && !hasBody(req) && !this.streamed;
  }

  /** The body's length is unknown until it ends: counted as it streams. */
  private get streamed(): boolean {
    return (
      this.context.streamedBody === true || this.req.headers["transfer-encoding"] !== undefined
    );
  }

  start(): void {
    const limit = this.route.policy.bodyLimit;
    if (limit !== undefined && !this.withinLimit(limit)) return;
    const tally = this.context.tally;
    if (tally !== undefined) this.countRequestBytes(tally);
    this.res.on("close", this.onClientClose);
    this.send();
  }

  private withinLimit(limit: number): boolean {
    const length = this.req.headers["content-length"];
    if (length !== undefined && Number(length) > limit) {
      reply(this.res, 413, true);
      return false;
    }
    if (this.streamed) {
      let seen = 0;
      this.req.on("data", (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > limit) this.tooLarge();
      });
    }
    return true;
  }

  private countRequestBytes(tally: ExchangeTally): void {
    const length = this.req.headers["content-length"];
    if (length !== undefined) tally.requestBytes = Number(length) || 0;
    else if (this.streamed) {
      this.req.on("data", (chunk: Buffer) => (tally.requestBytes += chunk.length));
    }
  }

  private tooLarge(): void {
    this.upstream?.destroy();
    this.upstream = undefined;
    if (!this.responded) {
      this.responded = true;
      reply(this.res, 413, true);
    }
  }

  private send(): void {
    const balance = this.route.policy.balance;
    const sticky = this.context.sticky;
    const endpoint =
      sticky === undefined
        ? this.route.backend.pickBy(balance, this.context.hashKey ?? "", this.endpoint)
        : sticky.pick(this.endpoint);
    // A gRPC backend is called over HTTP/2 only, for HTTP/2 clients (grpc/forward.ts).
    if (endpoint === undefined || this.route.policy.upstream?.grpc === true) {
      reply(this.res, 502);
      return;
    }
    this.endpoint = endpoint;
    this.tries++;
    this.connected = false;
    this.sentAt = balance?.kind === "ewma" ? performance.now() : -1;
    this.context.tally?.sent(endpoint.key);
    const tls = this.context.tls;
    const upstream = (tls === undefined ? request : requestTls)({
      host: endpoint.address,
      port: endpoint.port,
      method: this.req.method,
      path: this.context.target,
      headers: this.context.headers,
      agent: this.context.pools.agentFor(endpoint.key, tls),
      timeout: this.route.policy.connectTimeoutMs,
    });
    this.upstream = upstream;
    upstream.on("socket", this.onSocket);
    upstream.on("timeout", this.onTimeout);
    upstream.on("response", this.onResponse);
    upstream.on("error", this.onError);
    if (this.retryable || this.bodyless) {
      upstream.end();
    } else {
      this.bodyStarted = true;
      this.req.pipe(upstream);
    }
  }

  private readonly onSocket = (socket: Socket): void => {
    // A TLS connection is connected once its handshake is done.
    if (socket.connecting)
      socket.once(this.context.tls ? "secureConnect" : "connect", this.onConnect);
    else this.onConnect();
  };

  private readonly onConnect = (): void => {
    this.connected = true;
    const policy = this.route.policy;
    const upstream = this.upstream;
    if (upstream === undefined) return;
    // While the request body streams up, the send timeout; afterwards, the read timeout.
    if (upstream.writableFinished) upstream.setTimeout(policy.readTimeoutMs);
    else {
      upstream.setTimeout(policy.sendTimeoutMs);
      upstream.once("finish", () => upstream.setTimeout(policy.readTimeoutMs));
    }
  };

  private readonly onTimeout = (): void => {
    this.context.counters.timeouts++;
    this.upstream?.destroy(new UpstreamTimeout(this.connected));
  };

  /** The policy's response edits for an answer of this status. */
  private responseEdits(status: number): HeaderEdits | undefined {
    const context = this.context;
    return context.responseFor === undefined ? context.response : context.responseFor(status);
  }

  private readonly onResponse = (upstreamRes: IncomingMessage): void => {
    if (this.responded) {
      upstreamRes.resume();
      return;
    }
    if (this.sentAt >= 0) EWMA_STATS.record(this.endpoint!.key, performance.now() - this.sentAt);
    const pages = this.context.errorPages;
    const status = upstreamRes.statusCode ?? 502;
    const tally = this.context.tally;
    tally?.answered(status);
    if (pages?.codes.has(status) === true && this.req.complete) {
      upstreamRes.destroy();
      this.replaceAnswer(pages, status);
      return;
    }
    this.responded = true;
    const res = this.res;
    if (tally !== undefined) {
      upstreamRes.on("data", (chunk: Buffer) => (tally.responseBytes += chunk.length));
    }
    const headers = withStickyCookie(
      downstreamResponseHeaders(upstreamRes.rawHeaders, status),
      this.context.sticky,
    );
    const edits = this.responseEdits(status);
    res.writeHead(
      upstreamRes.statusCode ?? 502,
      edits === undefined ? headers : editFlatHeaders(headers, edits),
    );
    this.streamBody(upstreamRes);
  };

  /** The answer's body down to the client, paced by limit-rate, with its trailers when relayed. */
  private streamBody(upstreamRes: IncomingMessage): void {
    const res = this.res;
    upstreamRes.on("error", () => cutShort(res));
    upstreamRes.once("end", () => (this.bodyDone = true));
    // Before the pipe's own 'end' listener ends the answer.
    if (this.context.relayTrailers === true) relayTrailersOf(upstreamRes, res);
    const bandwidth = this.context.bandwidth;
    if (bandwidth === undefined) {
      upstreamRes.pipe(res);
      return;
    }
    const paced = new PacedBody(bandwidth);
    res.once("close", () => paced.destroy());
    upstreamRes.pipe(paced).pipe(res);
  }

  /**
   * custom-http-errors: the backend's answer is dropped with its connection, and the request is
   * asked of the default backend (error-pages.ts), or answered with the gateway's own page.
   */
  private replaceAnswer(pages: ErrorPages, status: number): void {
    this.upstream?.destroy();
    this.upstream = undefined;
    const backend = pages.backend;
    this.context.tally?.routed(backend ?? this.route, "main", "custom-error");
    if (backend === undefined) {
      this.responded = true;
      reply(this.res, status);
      return;
    }
    const facts = { target: this.req.url ?? "/", accept: this.req.headers.accept };
    const set = errorHeaders(pages.about, status, facts, true);
    const headers = editFlatHeaders(withoutFlatHeaders(this.context.headers, BODY_HEADERS), {
      set,
      add: [],
    });
    this.context = {
      ...this.context,
      headers,
      target: errorTarget(this.context.target),
      response: undefined,
      errorPages: undefined,
      sticky: undefined,
    };
    this.route = backend;
    this.bodyless = true;
    this.tries = 0;
    this.endpoint = undefined;
    this.send();
  }

  private readonly onError = (error: Error & { code?: string }): void => {
    this.context.counters.upstreamErrors++;
    const tls = this.context.tls;
    if (tls !== undefined && !this.connected && this.endpoint !== undefined)
      reportTlsFailure(this.endpoint.key, tls, error);
    if (this.responded) {
      cutShort(this.res);
      return;
    }
    if (this.mayRetry(error)) {
      this.context.counters.retries++;
      this.send();
      return;
    }
    this.responded = true;
    reply(this.res, isUpstreamTimeout(error.code) ? 504 : 502);
  };

  /** A connect failure (or a pooled connection the upstream closed) of an idempotent request without body. */
  private mayRetry(error: Error & { code?: string }): boolean {
    if (!this.retryable || this.bodyStarted) return false;
    const reusedReset = error.code === "ECONNRESET" && this.upstream?.reusedSocket === true;
    if (reusedReset) return true;
    const more =
      this.tries < Math.min(this.route.policy.tries, this.route.backend.endpoints.length);
    return more && isConnectFailure(error.code);
  }

  private readonly onClientClose = (): void => {
    // Not res.writableFinished: an HTTP/2 compatibility response reports a reset stream finished.
    if (!this.bodyDone) this.upstream?.destroy();
  };
}

/** Whether a request carries a body (Content-Length above 0 or any Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers["transfer-encoding"] !== undefined) return true;
  const length = headers["content-length"];
  return length !== undefined && length !== "0";
}

/** The upstream's trailer fields, once its body has ended, added to the client's answer. */
function relayTrailersOf(upstreamRes: IncomingMessage, res: ServerResponse): void {
  upstreamRes.once("end", () => {
    const trailers = relayableTrailers(upstreamRes.rawTrailers);
    if (Object.keys(trailers).length > 0) res.addTrailers(trailers);
  });
}
