// The fast path: one client connection speaking HTTP/1.1, proxied on raw sockets. The request head
// is parsed here and rewritten once; bodies pass through as bytes (chunked responses stay chunked);
// the response head is rewritten and the rest streams with backpressure both ways. One exchange at
// a time per connection (pipelined requests wait, unread). Whatever this path does not handle goes
// to Node's HTTP server at a request boundary (see heads.ts).
import type { Socket } from "node:net";
import { ExchangeTally, type TrafficObserver } from "../../observability/tally";
import {
  editHeaderLines,
  editResponseHead,
  hasEdits,
  ownResponseText,
  type HeaderEdits,
} from "../../policy/head-edits";
import { HeadLinesFacts } from "../../policy/request-values";
import { planRequest } from "../../policy/route-traffic";
import type { Endpoint, Route, RouteTable } from "../../routing/table";
import { findRoute } from "../../routing/table";
import type { ProxyCounters } from "../forward";
import { replyText } from "../replies";
import { isConnectFailure, isIdempotent } from "../retry-rules";
import { ChunkedScanner } from "./chunked";
import { parseRequestHead, parseResponseHead, type Framing, type RequestHead } from "./heads";
import type { UpstreamConnection, UpstreamOwner, UpstreamPool } from "./upstream";

/** What a connection needs from the engine. */
export interface FastContext {
  table(): RouteTable;
  readonly pool: UpstreamPool;
  readonly counters: ProxyCounters;
  /** Metrics and access log; undefined when both are off (no timing at all then). */
  readonly observer: TrafficObserver | undefined;
  isClosing(): boolean;
  /** Hands a connection to Node's HTTP server (its unread bytes already put back). */
  fallback(socket: Socket): void;
  forget(connection: ClientConnection): void;
}

const CRLFCRLF = Buffer.from("\r\n\r\n");
/** A client idle between requests, or slow to send a head, is closed after this (nginx: 75 s / 60 s). */
const CLIENT_IDLE_MS = 75_000;
const MAX_HEAD = 64 * 1024;
/** Response body bytes up to this, arrived with the head, are copied behind it into one write. */
const INLINE_BODY = 16 * 1024;
function isTimeout(error: (Error & { code?: string }) | undefined): boolean {
  return error?.code === "BWK_READ_TIMEOUT" || error?.code === "BWK_CONNECT_TIMEOUT";
}

const enum Phase {
  Head,
  Body,
  Response,
  Closed,
}

export class ClientConnection implements UpstreamOwner {
  private phase = Phase.Head;
  private buffered: Buffer | undefined = undefined;
  private readonly forwardedFixed: string;
  private readonly ip: string;
  // The exchange in progress.
  private route: Route | undefined = undefined;
  private request: RequestHead | undefined = undefined;
  private upstreamHead = "";
  private upstream: UpstreamConnection | undefined = undefined;
  private endpoint: Endpoint | undefined = undefined;
  private tries = 0;
  private bodyLeft = 0;
  private bodySent = false;
  private retryable = false;
  private responseHead: Buffer | undefined = undefined;
  private responded = false;
  private framing: Framing = "none";
  private responseLeft = 0;
  private chunked: ChunkedScanner | undefined = undefined;
  private upstreamReusable = false;
  private closeAfter = false;
  /** Response header edits of the traffic policy (CORS, canary actions); undefined for none. */
  private responseEdits: HeaderEdits | undefined = undefined;
  private status = 0;
  private readonly https: boolean;
  private readonly tally: ExchangeTally | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly context: FastContext,
    proto: string,
  ) {
    this.https = proto === "https";
    this.tally = context.observer === undefined ? undefined : new ExchangeTally(context.observer);
    const address = socket.remoteAddress ?? "";
    this.ip = address.startsWith("::ffff:") ? address.slice(7) : address;
    this.forwardedFixed = `X-Real-IP: ${this.ip}\r\nX-Forwarded-Proto: ${proto}\r\nX-Forwarded-Port: ${socket.localPort ?? ""}\r\n`;
    socket.on("data", this.onData);
    socket.on("drain", this.onDrain);
    socket.on("end", this.onEnd);
    socket.on("close", this.onClose);
    socket.on("error", this.onError);
    socket.on("timeout", this.onTimeout);
    socket.setTimeout(CLIENT_IDLE_MS);
  }

  /** Closes the connection if it is between requests (shutdown). */
  closeIfIdle(): void {
    if (this.phase === Phase.Head && this.buffered === undefined) this.socket.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private readonly onData = (data: Buffer): void => {
    if (this.phase === Phase.Body) {
      this.sendBody(data);
      return;
    }
    this.buffered = this.buffered === undefined ? data : Buffer.concat([this.buffered, data]);
    if (this.phase === Phase.Head) this.readHead();
    // While a response is on its way, a pipelined request waits unread.
    else this.socket.pause();
  };

  private readonly onDrain = (): void => {
    if (this.phase === Phase.Response) this.upstream?.socket.resume();
  };

  private readonly onEnd = (): void => {
    // Between requests, or with half a head that can no longer complete: close.
    if (this.phase === Phase.Head) this.socket.end();
    else this.closeAfter = true;
  };

  /** Exchanges have upstream timers of their own; only a silent client between requests is closed. */
  private readonly onTimeout = (): void => {
    if (this.phase === Phase.Head) this.socket.destroy();
  };

  private readonly onClose = (): void => {
    // An exchange cut short: nginx's 499 when the client left before the answer.
    this.tally?.finish(this.responded ? this.status : 499);
    this.phase = Phase.Closed;
    this.dropUpstream();
    this.context.forget(this);
  };

  private readonly onError = (): void => {
    this.socket.destroy();
  };

  private readHead(): void {
    const data = this.buffered;
    if (data === undefined) return;
    const end = data.indexOf(CRLFCRLF);
    if (end < 0) {
      if (data.length > MAX_HEAD) this.answer(431, true);
      return;
    }
    const head = parseRequestHead(data.toString("latin1", 0, end));
    if (head === undefined) {
      this.handOver();
      return;
    }
    this.buffered = end + 4 < data.length ? data.subarray(end + 4) : undefined;
    this.startExchange(head);
  }

  /** Gives the connection, with its unread bytes, to Node's HTTP server. */
  private handOver(): void {
    const socket = this.socket;
    socket.off("data", this.onData);
    socket.off("drain", this.onDrain);
    socket.off("end", this.onEnd);
    socket.off("close", this.onClose);
    socket.off("error", this.onError);
    socket.off("timeout", this.onTimeout);
    socket.setTimeout(0);
    this.context.forget(this);
    if (this.buffered !== undefined) socket.unshift(this.buffered);
    this.buffered = undefined;
    this.context.fallback(socket);
  }

  private startExchange(head: RequestHead): void {
    this.context.counters.requests++;
    this.request = head;
    this.closeAfter ||= head.close || this.context.isClosing();
    const tally = this.tally;
    if (tally !== undefined) {
      tally.begin(head.method, head.target, head.host);
      tally.requestBytes = head.contentLength;
    }
    const main = findRoute(this.context.table(), head.host, head.target);
    if (main === undefined) {
      this.answer(404, head.contentLength > 0);
      return;
    }
    tally?.routed(main, "main", "");
    const limit = main.policy.bodyLimit;
    if (limit !== undefined && head.contentLength > limit) {
      this.answer(413, true);
      return;
    }
    const route = main.traffic === undefined ? main : this.applyPolicy(main, head);
    if (route === undefined) return;
    this.route = route;
    this.tries = 0;
    this.endpoint = undefined;
    this.bodyLeft = head.contentLength;
    this.bodySent = false;
    this.retryable = head.contentLength === 0 && isIdempotent(head.method);
    this.responded = false;
    this.responseHead = undefined;
    if (main.traffic === undefined) {
      this.responseEdits = undefined;
      this.upstreamHead = this.headFor(head, head.target, head.lines);
    }
    this.phase = Phase.Body;
    this.connectUpstream();
  }

  private headFor(head: RequestHead, target: string, lines: string): string {
    const xff = head.forwardedFor === undefined ? this.ip : `${head.forwardedFor}, ${this.ip}`;
    return `${head.method} ${target} HTTP/1.1\r\n${lines}X-Forwarded-For: ${xff}\r\n${this.forwardedFixed}X-Forwarded-Host: ${head.host ?? ""}\r\n\r\n`;
  }

  /**
   * The route's traffic policy, decided once: answers here (undefined returned) or sets the
   * upstream head and response edits and returns the route that serves (main or a canary).
   */
  private applyPolicy(main: Route, head: RequestHead): Route | undefined {
    const plan = planRequest(main, main.traffic!, new HeadLinesFacts(head, this.https));
    if (plan.kind === "answer") {
      this.tally?.routed(main, "main", plan.decision);
      const close = this.closeAfter || head.contentLength > 0;
      const text = ownResponseText(plan.answer, close, head.method === "HEAD");
      this.answer(plan.answer.status, close, text);
      return undefined;
    }
    this.tally?.routed(plan.route, plan.variant, plan.decision);
    const lines = hasEdits(plan.request) ? editHeaderLines(head.lines, plan.request) : head.lines;
    this.upstreamHead = this.headFor(head, plan.target, lines);
    this.responseEdits = hasEdits(plan.response) ? plan.response : undefined;
    return plan.route;
  }

  private connectUpstream(): void {
    const route = this.route!;
    const endpoint = route.backend.pick(this.endpoint);
    if (endpoint === undefined) {
      this.answer(502, this.bodyLeft > 0);
      return;
    }
    this.endpoint = endpoint;
    this.tries++;
    this.tally?.sent(endpoint.key);
    const upstream = this.context.pool.acquire(endpoint, this, route.policy.connectTimeoutMs);
    this.upstream = upstream;
    if (upstream.connected) upstream.setTimeout(route.policy.sendTimeoutMs);
    upstream.socket.write(this.upstreamHead, "latin1");
    const rest = this.buffered;
    this.buffered = undefined;
    if (this.bodyLeft === 0) {
      this.requestSent();
      if (rest !== undefined) this.buffered = rest;
    } else if (rest !== undefined) {
      this.sendBody(rest);
    }
  }

  private sendBody(data: Buffer): void {
    const upstream = this.upstream;
    if (upstream === undefined) return;
    this.bodySent = true;
    const take = Math.min(this.bodyLeft, data.length);
    this.bodyLeft -= take;
    const fits = upstream.socket.write(take === data.length ? data : data.subarray(0, take));
    if (take < data.length) this.buffered = data.subarray(take);
    if (this.bodyLeft === 0) this.requestSent();
    else if (!fits) this.socket.pause();
  }

  /** The whole request is upstream: wait for the answer with the read timeout. */
  private requestSent(): void {
    this.phase = Phase.Response;
    this.socket.pause();
    if (this.upstream?.connected === true)
      this.upstream.setTimeout(this.route!.policy.readTimeoutMs);
  }

  /** Connected: the connect timeout gives way to the send or read timeout. */
  onUpstreamConnect(): void {
    const policy = this.route?.policy;
    if (policy === undefined) return;
    const ms = this.phase === Phase.Body ? policy.sendTimeoutMs : policy.readTimeoutMs;
    this.upstream?.setTimeout(ms);
  }

  onUpstreamDrain(): void {
    if (this.phase === Phase.Body) this.socket.resume();
  }

  onUpstreamData(data: Buffer): void {
    if (this.responded) {
      this.forwardBody(data, 0);
      return;
    }
    const head = this.responseHead === undefined ? data : Buffer.concat([this.responseHead, data]);
    const end = head.indexOf(CRLFCRLF);
    if (end < 0) {
      this.responseHead = head;
      if (head.length > MAX_HEAD) this.upstream?.socket.destroy();
      return;
    }
    this.responseHead = undefined;
    this.startResponse(head, end);
  }

  private startResponse(data: Buffer, end: number): void {
    const parsed = parseResponseHead(
      data.toString("latin1", 0, end),
      this.request?.method === "HEAD",
    );
    if (parsed === undefined) {
      this.upstream?.socket.destroy();
      return;
    }
    if (parsed.status >= 100 && parsed.status < 200) {
      // Informational (103 Early Hints): pass it on and wait for the final head.
      this.socket.write(`${parsed.head}\r\n\r\n`, "latin1");
      if (end + 4 < data.length) this.onUpstreamData(data.subarray(end + 4));
      return;
    }
    this.responded = true;
    this.status = parsed.status;
    this.tally?.answered();
    this.framing = parsed.framing;
    this.responseLeft = parsed.length;
    this.chunked = parsed.framing === "chunked" ? new ChunkedScanner() : undefined;
    this.upstreamReusable = !parsed.upstreamCloses;
    if (parsed.framing === "close") this.closeAfter = true;
    this.sendFirst(this.clientHead(parsed.head), data, end + 4);
  }

  /**
   * The response head with the body bytes that came with it: one write. A small body is copied
   * behind the head into one buffer (cheaper than corking two writes into a writev); a larger one
   * goes in a corked writev.
   */
  private sendFirst(head: string, data: Buffer, start: number): void {
    const stop = this.framing === "none" ? start : this.bodyStop(data, start);
    if (stop === -2) {
      this.socket.write(head, "latin1");
      this.upstream?.socket.destroy();
      return;
    }
    const finished = stop >= 0;
    const end = finished ? stop : data.length;
    const bytes = end - start;
    if (bytes > 0 && this.tally !== undefined) this.countBody(this.tally, bytes);
    let fits: boolean;
    if (bytes === 0) {
      fits = this.socket.write(head, "latin1");
    } else if (bytes <= INLINE_BODY) {
      const out = Buffer.allocUnsafe(head.length + bytes);
      out.write(head, 0, "latin1");
      data.copy(out, head.length, start, end);
      fits = this.socket.write(out);
    } else {
      this.socket.cork();
      this.socket.write(head, "latin1");
      fits = this.socket.write(data.subarray(start, end));
      this.socket.uncork();
    }
    if (finished) this.finishExchange(end < data.length);
    else if (!fits) this.upstream?.socket.pause();
  }

  /** The response head for the client: the policy's edits, Connection: close when closing. */
  private clientHead(head: string): string {
    const edits = this.responseEdits;
    const edited = edits === undefined ? head : editResponseHead(head, edits);
    return `${edited}${this.closeAfter ? "\r\nConnection: close" : ""}\r\n\r\n`;
  }

  private forwardBody(data: Buffer, start: number): void {
    const stop = this.bodyStop(data, start);
    if (stop === -2) {
      this.upstream?.socket.destroy();
      return;
    }
    const finished = stop >= 0;
    const end = finished ? stop : data.length;
    if (end > start) {
      if (this.tally !== undefined) this.countBody(this.tally, end - start);
      const fits = this.socket.write(
        start === 0 && end === data.length ? data : data.subarray(start, end),
      );
      if (!fits && !finished) this.upstream?.socket.pause();
    }
    if (finished) this.finishExchange(end < data.length);
  }

  /** Decoded body bytes, as Node's path counts them: chunk framing left out. */
  private countBody(tally: ExchangeTally, bytes: number): void {
    tally.responseBytes = this.chunked?.payload ?? tally.responseBytes + bytes;
  }

  /** Where the response body ends in `data`: an index, -1 when it goes on, -2 when malformed. */
  private bodyStop(data: Buffer, start: number): number {
    if (this.framing === "length") {
      const stop = Math.min(data.length, start + this.responseLeft);
      this.responseLeft -= stop - start;
      return this.responseLeft === 0 ? stop : -1;
    }
    if (this.framing === "chunked") return this.chunked!.scan(data, start);
    return -1;
  }

  private finishExchange(upstreamSentExtra: boolean): void {
    this.tally?.finish(this.status);
    const upstream = this.upstream;
    this.upstream = undefined;
    if (upstream !== undefined) {
      if (this.upstreamReusable && !upstreamSentExtra && this.bodyLeft === 0) {
        upstream.socket.resume();
        this.context.pool.release(upstream);
      } else {
        upstream.owner = undefined;
        upstream.socket.destroy();
      }
    }
    this.route = undefined;
    this.request = undefined;
    this.nextRequest();
  }

  private nextRequest(): void {
    if (this.closeAfter) {
      this.phase = Phase.Closed;
      this.socket.end();
      return;
    }
    this.phase = Phase.Head;
    this.socket.resume();
    // A pipelined request waits for the next turn, so a long pipeline cannot grow the stack.
    if (this.buffered !== undefined) setImmediate(this.readPipelined);
  }

  private readonly readPipelined = (): void => {
    if (this.phase === Phase.Head) this.readHead();
  };

  onUpstreamGone(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): void {
    if (connection !== this.upstream) return;
    this.upstream = undefined;
    if (this.responded) {
      // A close-delimited body ends with the connection; anything else was cut short.
      if (this.framing === "close" && error === undefined) this.finishExchange(false);
      else this.socket.destroy();
      return;
    }
    const counters = this.context.counters;
    counters.upstreamErrors++;
    const timeout = isTimeout(error);
    if (timeout) counters.timeouts++;
    if (this.mayRetry(connection, error)) {
      counters.retries++;
      this.connectUpstream();
      return;
    }
    this.answer(timeout ? 504 : 502, this.bodyLeft > 0 || this.closeAfter);
  }

  private mayRetry(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): boolean {
    if (!this.retryable || this.bodySent || this.responseHead !== undefined) return false;
    // A pooled connection the upstream had closed: the request never reached the application.
    if (connection.reused && error?.code !== "BWK_READ_TIMEOUT") return true;
    const route = this.route!;
    const more = this.tries < Math.min(route.policy.tries, route.backend.endpoints.length);
    return more && isConnectFailure(error?.code);
  }

  /** The gateway's own answer (`text`: a whole response, else a plain one); the exchange ends with it. */
  private answer(status: number, close: boolean, text?: string): void {
    this.tally?.finish(status);
    this.closeAfter ||= close;
    this.dropUpstream();
    this.route = undefined;
    this.request = undefined;
    this.bodyLeft = 0;
    this.phase = Phase.Response;
    this.socket.write(text ?? replyText(status, this.closeAfter), "latin1");
    this.nextRequest();
  }

  private dropUpstream(): void {
    const upstream = this.upstream;
    if (upstream === undefined) return;
    this.upstream = undefined;
    upstream.owner = undefined;
    upstream.socket.destroy();
  }
}
