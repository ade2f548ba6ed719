// An HTTP/2 request stream proxied to an HTTP/1.1 upstream on the fast path's raw pooled
// connections (fast/upstream.ts), without Node's compatibility layer or HTTP client: the upstream
// head is written once as text, the answer's head is checked by the fast path's parser and sent
// with one respond(), and its body (chunk framing removed, trailers relayed when the client takes
// them) is written to the stream with backpressure both ways. Streams it does not take
// (`takesStream`) keep the engine's Node path, which serves every feature.
import {
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { ExchangeTally } from "../../observability/tally";
import type { StickyChoice } from "../../policy/affinity";
import {
  editResponseHead,
  ownAnswerHeaders,
  type HeaderEdits,
  type OwnAnswer,
} from "../../policy/head-edits";
import { EWMA_STATS } from "../../routing/balance";
import type { Endpoint, Route } from "../../routing/table";
import { upstreamTlsFor } from "../../routing/upstream";
import type { ChunkSink } from "../fast/chunked";
import { parseResponseHead } from "../fast/heads";
import { collectResponseHead, ResponseBody } from "../fast/response-body";
import type { UpstreamConnection, UpstreamOwner, UpstreamPool } from "../fast/upstream";
import type { ProxyCounters } from "../forward";
import { isGrpcRequest } from "../grpc/status";
import type { CheckedRequest } from "../node-request";
import { replyOnStream, resetStream } from "../replies";
import { isConnectFailure, isIdempotent, isUpstreamTimeout, READ_TIMEOUT } from "../retry-rules";
import { CONNECTION_SPECIFIC, gatherField } from "./request";
import { relayableTrailers } from "./trailers";

/**
 * Whether this path serves the stream: a route whose traffic policy needs no more than its plan
 * (auth-url and custom-http-errors are Node's path's), an HTTP/1.1 upstream, no limit-rate, a body
 * of declared length within the route's limit, no Expect and no gRPC.
 */
export function takesStream(
  main: Route | undefined,
  checked: CheckedRequest,
  headers: IncomingHttpHeaders,
): main is Route {
  if (main === undefined || checked.chunked) return false;
  const traffic = main.traffic;
  if (traffic !== undefined && (traffic.auth !== undefined || traffic.errorPages !== undefined)) {
    return false;
  }
  const policy = main.policy;
  if (policy.bandwidth !== undefined || policy.upstream?.grpc === true) return false;
  if (headers.expect !== undefined || isGrpcRequest(headers["content-type"])) return false;
  const length = bodyLengthOf(headers);
  return policy.bodyLimit === undefined || length <= policy.bodyLimit;
}

/** A field value that would split an HTTP/1.1 head (nghttp2 refuses CR, LF and NUL already). */
export function splitsHead(flat: readonly string[]): boolean {
  for (let i = 1; i < flat.length; i += 2) if (SPLITS_HEAD.test(flat[i]!)) return true;
  return false;
}

/** The request body's declared length (0 without Content-Length: the HEADERS ended the stream). */
export function bodyLengthOf(headers: IncomingHttpHeaders): number {
  const length = headers["content-length"];
  return length === undefined ? 0 : Number(length);
}

/** The upstream head from the flat field list the Node path would send (upstreamRequestHeaders). */
export function upstreamHeadText(method: string, target: string, flat: readonly string[]): string {
  let head = `${method} ${target} HTTP/1.1\r\n`;
  for (let i = 0; i < flat.length; i += 2) head += `${flat[i]!}: ${flat[i + 1]!}\r\n`;
  return `${head}\r\n`;
}

const SPLITS_HEAD = /[\0\r\n]/;

/** Fields HTTP/2 forbids in a response (RFC 9113 8.2.2), beyond those the parser drops already. */
const NOT_IN_H2_RESPONSE: ReadonlySet<string> = new Set([
  ...CONNECTION_SPECIFIC,
  "te",
  "trailer",
  "http2-settings",
]);

/**
 * The response head ("HTTP/1.1 NNN reason\r\nName: value…", hop-by-hop fields already left out)
 * as HTTP/2 headers: names in lower case, repeated ones gathered in order, a 204's length left out.
 */
export function h2ResponseHeaders(head: string, status: number): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ":status": status };
  let at = head.indexOf("\r\n");
  while (at >= 0) {
    const start = at + 2;
    const next = head.indexOf("\r\n", start);
    const colon = head.indexOf(":", start);
    const name = head.slice(start, colon).toLowerCase();
    at = next;
    if (NOT_IN_H2_RESPONSE.has(name)) continue;
    // A 204 has no content; HTTP/2 clients (nghttp2) refuse one that declares a length.
    if (status === 204 && name === "content-length") continue;
    gatherField(out, name, head.slice(colon + 1, next < 0 ? head.length : next).trim());
  }
  return out;
}

/** The gateway's own answer (a policy's: redirect, preflight, refusal) on an HTTP/2 stream. */
export function answerOnStream(stream: ServerHttp2Stream, own: OwnAnswer, bodyless: boolean): void {
  if (stream.destroyed) return;
  const headers: OutgoingHttpHeaders = { ":status": own.status };
  for (const [name, value] of ownAnswerHeaders(own, false)) {
    gatherField(headers, name.toLowerCase(), value);
  }
  const empty = bodyless || own.body === "";
  stream.respond(headers, { endStream: empty });
  if (!empty) stream.end(own.body);
}

/** What an exchange needs from the engine. */
export interface H2ExchangeContext {
  readonly pool: UpstreamPool;
  readonly counters: ProxyCounters;
}

/** One stream's request, decided: where it goes and what is sent. */
export interface H2Proxied {
  route: Route;
  method: string;
  /** The upstream head, whole (upstreamHeadText). */
  head: string;
  /** Request body bytes still to come from the client. */
  bodyLength: number;
  /** The client said `TE: trailers`: a chunked answer's trailer fields follow its DATA. */
  relayTrailers: boolean;
  https: boolean;
  tally: ExchangeTally | undefined;
  /** The plan's response edits (CORS, canary actions); undefined for none. */
  responseEdits?: HeaderEdits | undefined;
  /** upstream-hash-by's key ("" when the route does not hash). */
  hashKey?: string;
  /** affinity: the endpoint of each try, and the cookie to set. */
  sticky?: StickyChoice | undefined;
  /** limit-connections: frees the client's slot once the exchange ends, however it ends. */
  release?: (() => void) | undefined;
}

export class H2Exchange implements UpstreamOwner {
  private upstream: UpstreamConnection | undefined = undefined;
  private endpoint: Endpoint | undefined = undefined;
  private tries = 0;
  private bodyLeft: number;
  private bodySent = false;
  private upstreamSpoke = false;
  private responseHead: Buffer | undefined = undefined;
  private responded = false;
  /** Where the answer's body ends (its chunk framing stripped on the way). */
  private readonly body = new ResponseBody();
  private upstreamReusable = false;
  private status = 0;
  private sentAt = -1;
  private done = false;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly context: H2ExchangeContext,
    private readonly request: H2Proxied,
  ) {
    this.bodyLeft = request.bodyLength;
  }

  start(): void {
    const stream = this.stream as OwnedStream;
    // The listeners are shared functions that find the exchange on the stream: a stream costs
    // no closures.
    stream[EXCHANGE] = this;
    stream.on("close", onStreamClose);
    // A stream's error (its session destroyed for abuse, a reset) ends in 'close' too.
    stream.on("error", ignore);
    stream.on("drain", onStreamDrain);
    if (this.bodyLeft > 0) stream.on("data", onStreamData);
    this.connectUpstream();
  }

  private connectUpstream(): void {
    const { route, https, tally, sticky } = this.request;
    const policy = route.policy;
    const endpoint =
      sticky === undefined
        ? route.backend.pickBy(policy.balance, this.request.hashKey ?? "", this.endpoint)
        : sticky.pick(this.endpoint);
    if (endpoint === undefined) {
      this.answer(502);
      return;
    }
    this.endpoint = endpoint;
    this.tries++;
    this.sentAt = policy.balance?.kind === "ewma" ? performance.now() : -1;
    tally?.sent(endpoint.key);
    const tls = policy.upstream === undefined ? undefined : upstreamTlsFor(policy.upstream, https);
    const upstream = this.context.pool.acquire(endpoint, this, policy.connectTimeoutMs, tls);
    this.upstream = upstream;
    if (upstream.connected) upstream.setTimeout(policy.sendTimeoutMs);
    upstream.send(this.request.head, "latin1");
    if (this.bodyLeft === 0) this.requestSent();
  }

  /** Request body bytes from the client. */
  requestBody(data: Buffer): void {
    const upstream = this.upstream;
    if (upstream === undefined || this.done) return;
    if (data.length > this.bodyLeft) {
      // More DATA than the declared length (nghttp2 refuses this first): never passed on.
      this.stream.close(constants.NGHTTP2_PROTOCOL_ERROR);
      return;
    }
    this.bodySent = true;
    this.bodyLeft -= data.length;
    const fits = upstream.send(data);
    if (this.bodyLeft === 0) this.requestSent();
    else if (!fits) this.stream.pause();
  }

  /** The whole request is upstream: wait for the answer with the read timeout. */
  private requestSent(): void {
    if (this.upstream?.connected === true) {
      this.upstream.setTimeout(this.request.route.policy.readTimeoutMs);
    }
  }

  onUpstreamConnect(): void {
    const policy = this.request.route.policy;
    this.upstream?.setTimeout(this.bodyLeft > 0 ? policy.sendTimeoutMs : policy.readTimeoutMs);
  }

  onUpstreamDrain(): void {
    if (this.bodyLeft > 0) this.stream.resume();
  }

  /** The client has read what was written: the upstream may send more. */
  streamDrained(): void {
    this.upstream?.socket.resume();
  }

  /** Always kept: an HTTP/2 stream holds what it is given until it is framed and sent. */
  onUpstreamData(data: Buffer): boolean {
    this.takeUpstreamData(data);
    return true;
  }

  private takeUpstreamData(data: Buffer): void {
    if (this.responded) {
      this.forwardBody(data, 0);
      return;
    }
    this.upstreamSpoke = true;
    const { head, end } = collectResponseHead(this.responseHead, data);
    if (end === -2) {
      this.badResponse();
      return;
    }
    if (end < 0) {
      this.responseHead = head;
      return;
    }
    this.responseHead = undefined;
    this.startResponse(head, end);
  }

  /** The upstream's answer cannot be passed on safely: 502, and that connection is closed. */
  private badResponse(): void {
    this.context.counters.upstreamErrors++;
    this.answer(502);
  }

  private startResponse(data: Buffer, end: number): void {
    const parsed = parseResponseHead(
      data.toString("latin1", 0, end),
      this.request.method === "HEAD",
    );
    if (parsed === undefined) {
      this.badResponse();
      return;
    }
    if (parsed.status < 200) {
      // Informational (100, 103): not passed on, as on the Node path; the final head follows.
      if (end + 4 < data.length) this.takeUpstreamData(data.subarray(end + 4));
      return;
    }
    const tally = this.request.tally;
    tally?.answered(parsed.status);
    if (this.sentAt >= 0) EWMA_STATS.record(this.endpoint!.key, performance.now() - this.sentAt);
    this.status = parsed.status;
    this.upstreamReusable = !parsed.upstreamCloses;
    const trailers = this.request.relayTrailers && parsed.framing === "chunked";
    const sink = parsed.framing === "chunked" ? this.payloadSink() : undefined;
    this.body.begin(parsed, sink, trailers);
    if (!this.respond(parsed.head, parsed.framing === "none", trailers)) return;
    if (parsed.framing === "none") {
      this.finish(end + 4 < data.length);
      return;
    }
    if (end + 4 < data.length) this.forwardBody(data, end + 4);
  }

  /** The answer's head to the client; false when the stream is gone or refused it. */
  private respond(head: string, endStream: boolean, waitForTrailers: boolean): boolean {
    const stream = this.stream;
    if (stream.destroyed) return false;
    try {
      stream.respond(h2ResponseHeaders(this.clientHead(head), this.status), {
        endStream,
        waitForTrailers,
      });
    } catch {
      // A field HTTP/2 cannot carry (a single-value field repeated): nothing is out yet.
      this.badResponse();
      return false;
    }
    this.responded = true;
    if (waitForTrailers) stream.once("wantTrailers", () => this.sendTrailers());
    return true;
  }

  /** The head with the sticky cookie and the plan's edits, in the Node path's order. */
  private clientHead(head: string): string {
    const { sticky, responseEdits } = this.request;
    const cookie = sticky?.setCookie;
    const withCookie = cookie === undefined ? head : `${head}\r\nSet-Cookie: ${cookie}`;
    return responseEdits === undefined ? withCookie : editResponseHead(withCookie, responseEdits);
  }

  private sendTrailers(): void {
    const text = this.body.chunks?.trailerText ?? "";
    this.stream.sendTrailers(relayableTrailers(trailerPairs(text)));
  }

  /** Where the payload bytes of a chunked answer go, framing removed. */
  private payloadSink(): ChunkSink {
    return (data, from, to) =>
      this.write(from === 0 && to === data.length ? data : data.subarray(from, to));
  }

  private write(data: Buffer): void {
    // Node ends a stream at its head for HEAD, 204, 205 and 304: what follows is not sent.
    if (this.stream.writableEnded) return;
    const tally = this.request.tally;
    if (tally !== undefined) tally.responseBytes += data.length;
    if (!this.stream.write(data)) this.upstream?.socket.pause();
  }

  private forwardBody(data: Buffer, start: number): void {
    const stop = this.body.stop(data, start);
    if (stop === -2) {
      // Broken chunk framing mid-answer: the client's stream is reset, never given a bad body.
      this.dropUpstream();
      resetStream(this.stream);
      return;
    }
    const finished = stop >= 0;
    const end = finished ? stop : data.length;
    if (this.body.framing !== "chunked" && end > start) {
      this.write(start === 0 && end === data.length ? data : data.subarray(start, end));
    }
    if (finished) this.finish(end < data.length);
  }

  /** The answer is whole: the stream ends, the upstream connection goes back to its pool. */
  private finish(upstreamSentExtra: boolean): void {
    this.end();
    const stream = this.stream;
    if (!stream.writableEnded && !stream.destroyed) stream.end();
    this.request.tally?.finish(this.status);
    const upstream = this.upstream;
    this.upstream = undefined;
    if (upstream === undefined) return;
    upstream.socket.resume();
    if (this.upstreamReusable && !upstreamSentExtra && this.bodyLeft === 0) {
      this.context.pool.release(upstream);
    } else {
      upstream.owner = undefined;
      upstream.socket.destroy();
    }
  }

  onUpstreamGone(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): void {
    if (connection !== this.upstream) return;
    this.upstream = undefined;
    if (this.responded) {
      // A close-delimited body ends with the connection; anything else was cut short.
      if (this.body.framing === "close" && error === undefined) this.finish(false);
      else resetStream(this.stream);
      return;
    }
    const counters = this.context.counters;
    counters.upstreamErrors++;
    const timeout = isUpstreamTimeout(error?.code);
    if (timeout) counters.timeouts++;
    if (this.mayRetry(connection, error)) {
      counters.retries++;
      this.connectUpstream();
      return;
    }
    this.answer(timeout ? 504 : 502);
  }

  /** A connect failure (or a pooled connection the upstream had closed) of an idempotent request without body. */
  private mayRetry(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): boolean {
    const request = this.request;
    if (request.bodyLength > 0 || this.bodySent || this.upstreamSpoke) return false;
    if (!isIdempotent(request.method)) return false;
    if (connection.reused && error?.code !== READ_TIMEOUT) return true;
    const route = request.route;
    const more = this.tries < Math.min(route.policy.tries, route.backend.endpoints.length);
    return more && isConnectFailure(error?.code);
  }

  /** The gateway's own answer; the exchange ends with it. */
  private answer(status: number): void {
    this.end();
    this.dropUpstream();
    this.request.tally?.finish(status);
    replyOnStream(this.stream, status, this.request.method === "HEAD");
  }

  /** The exchange is over: a limit-connections slot is free again. */
  private end(): void {
    this.done = true;
    const release = this.request.release;
    this.request.release = undefined;
    release?.();
  }

  private dropUpstream(): void {
    const upstream = this.upstream;
    if (upstream === undefined) return;
    this.upstream = undefined;
    upstream.owner = undefined;
    upstream.socket.destroy();
  }

  /** The client reset the stream, or its session ended: the upstream exchange is abandoned. */
  streamClosed(): void {
    if (this.done) return;
    this.end();
    this.dropUpstream();
    this.request.tally?.finish(this.responded ? this.status : 499);
  }
}

const EXCHANGE = Symbol("h2 exchange");

type OwnedStream = ServerHttp2Stream & { [EXCHANGE]?: H2Exchange };

function onStreamClose(this: OwnedStream): void {
  this[EXCHANGE]?.streamClosed();
}

function onStreamDrain(this: OwnedStream): void {
  this[EXCHANGE]?.streamDrained();
}

function onStreamData(this: OwnedStream, data: Buffer): void {
  this[EXCHANGE]?.requestBody(data);
}

function ignore(): void {}

/** Trailer lines ("name: value\r\n" each) as a flat [name, value, …] list. */
export function trailerPairs(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    out.push(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return out;
}
