// The fast path: one client connection speaking HTTP/1.1, proxied on raw sockets. The request head
// is parsed here by the front door's rules and re-serialized once; bodies pass through as bytes
// whose framing is checked on the way (chunked bodies stay chunked, both ways); the response head
// is checked and rewritten and the rest streams with backpressure both ways. One exchange at a time
// per connection (pipelined requests wait, unread); bytes after a body the exchange did not finish
// reading are never parsed as a request (the connection closes). Whatever this path does not
// handle goes to Node's HTTP server at a request boundary (see heads.ts).
import type { Socket } from "node:net";
import { ExchangeTally, type TrafficObserver } from "../../observability/tally";
import {
  editHeaderLines,
  editResponseHead,
  hasEdits,
  ownResponseText,
  withoutHeaderLines,
  type HeaderEdits,
  type OwnAnswer,
} from "../../policy/head-edits";
import { formatIp, type Address } from "../../../core/net/ip";
import { requestIdOf } from "../../observability/request-id";
import type { ClientAddresses, Peer } from "../../policy/client-address";
import { peerAddressOf } from "../proxy-protocol";
import { BODY_HEADERS, errorHeaders, errorTarget, type ErrorPages } from "../../policy/error-pages";
import { HeadLinesFacts, headerInLines } from "../../policy/request-values";
import type { StickyChoice } from "../../policy/affinity";
import { planRequest, type Plan, type ProxyPlan } from "../../policy/route-traffic";
import {
  authorizedLines,
  pairsOfLines,
  withAuthCookies,
  type AuthPass,
  type ExternalAuth,
} from "../../policy/external-auth";
import type { Endpoint, Route, RouteTable } from "../../routing/table";
import { findRoute } from "../../routing/table";
import { EWMA_STATS } from "../../routing/balance";
import { upstreamTlsFor } from "../../routing/upstream";
import type { ProxyCounters } from "../forward";
import { replyText } from "../replies";
import { isConnectFailure, isIdempotent, isUpstreamTimeout, READ_TIMEOUT } from "../retry-rules";
import { ChunkedScanner } from "./chunked";
import { isRefusal, refusal, type FrontDoorLimits, type Refusal } from "../request-rules";
import { findHeadEnd, resumeAt } from "./head-end";
import { collectResponseHead, ResponseBody } from "./response-body";
import { parseRequestHead, parseResponseHead, type RequestHead } from "./heads";
import { IdleTimer } from "./idle-timer";
import type { UpstreamConnection, UpstreamOwner, UpstreamPool } from "./upstream";

/** What a connection needs from the engine. */
export interface FastContext {
  table(): RouteTable;
  readonly pool: UpstreamPool;
  readonly counters: ProxyCounters;
  /** Metrics and access log; undefined when both are off (no timing at all then). */
  readonly observer: TrafficObserver | undefined;
  isClosing(): boolean;
  /**
   * Hands a connection to Node's HTTP server (its unread bytes already put back), with the route
   * found for the request it brings, if one was.
   */
  fallback(socket: Socket, found?: { host: string; target: string; main: Route | undefined }): void;
  forget(connection: ClientConnection): void;
  /** The front door's limits (settings). */
  readonly limits: FrontDoorLimits;
  /** Who a connection's client is (the peer, or whom trusted proxies name). */
  readonly clients: ClientAddresses;
  /** Counts and logs a refused request (once per connection: a refusal closes it). */
  refused(reason: Refusal, client: string): void;
}

/** A client idle between requests is closed after this (nginx keepalive_timeout: 75 s). */
const CLIENT_IDLE_MS = 75_000;
/** Closing with request body still due: read and drop it for up to 30 s, 5 s between reads (nginx lingering_time, lingering_timeout). */
const LINGER_MS = 30_000;
const LINGER_IDLE_MS = 5_000;
const HEAD_TIMEOUT = refusal("head-timeout");
const BODY_TIMEOUT = refusal("body-timeout");
const HEAD_TOO_LARGE = refusal("head-too-large");
const BARE_LF = refusal("bare-line-feed");
const BAD_CHUNKS = refusal("invalid-chunked-body");
const BODY_TOO_LARGE = refusal("body-too-large");
const AUTHORIZATION: ReadonlySet<string> = new Set(["authorization"]);
/** Response body bytes up to this, arrived with the head, are copied behind it into one write. */
const INLINE_BODY = 16 * 1024;

const enum Phase {
  Head,
  Body,
  Response,
  Closed,
}

export class ClientConnection implements UpstreamOwner {
  private phase = Phase.Head;
  private buffered: Buffer | undefined = undefined;
  /** A growing copy of an unfinished head, so a head sent in many pieces is copied O(n) in all. */
  private store: Buffer | undefined = undefined;
  /** Where to resume scanning `buffered` for the head's end: the start of its unfinished line. */
  private scanned = 0;
  /** When the unfinished head's first byte arrived (0: no unfinished head). */
  private headStarted = 0;
  /** The idle, head, body or linger timeout, whichever applies now. */
  private readonly idle: IdleTimer;
  private readonly limits: FrontDoorLimits;
  private readonly forwardedFixed: string;
  private readonly ip: string;
  private readonly peer: Peer;
  /** This exchange's client: the peer, unless a trusted proxy forwarded the request. */
  private client: Address;
  // The exchange in progress.
  private route: Route | undefined = undefined;
  private request: RequestHead | undefined = undefined;
  private upstreamHead = "";
  /** The exchange's request id: sent upstream as X-Request-ID and logged. */
  private requestId = "";
  private upstream: UpstreamConnection | undefined = undefined;
  private endpoint: Endpoint | undefined = undefined;
  private tries = 0;
  private bodyLeft = 0;
  /** A chunked request body's framing, checked as it passes; undefined for a length. */
  private requestChunks: ChunkedScanner | undefined = undefined;
  private bodySent = false;
  /** The upstream sent something for this exchange: it cannot be retried. */
  private upstreamSpoke = false;
  private retryable = false;
  private responseHead: Buffer | undefined = undefined;
  private responded = false;
  /** Where the answer's body ends. */
  private readonly body = new ResponseBody();
  private upstreamReusable = false;
  private closeAfter = false;
  /** Response header edits of the traffic policy (CORS, canary actions); undefined for none. */
  private responseEdits: HeaderEdits | undefined = undefined;
  /** custom-http-errors of the exchange; undefined for none (and once an answer was replaced). */
  private errorPages: ErrorPages | undefined = undefined;
  /** upstream-hash-by's key for the request ("" when its route does not hash). */
  private hashKey = "";
  /** affinity: the request's sticky choice of endpoint and cookie; undefined without. */
  private sticky: StickyChoice | undefined = undefined;
  /** When the request went to an ewma route's endpoint (performance.now()); -1 otherwise. */
  private sentAt = -1;
  /** auth-url's verdict for the exchange in progress (its Set-Cookie for the answer). */
  private authPass: AuthPass | undefined = undefined;
  /** limit-connections: the release of the slot the exchange in progress holds. */
  private slot: (() => void) | undefined = undefined;
  private status = 0;
  private readonly https: boolean;
  private readonly tally: ExchangeTally | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly context: FastContext,
    proto: string,
  ) {
    this.https = proto === "https";
    this.limits = context.limits;
    this.tally = context.observer === undefined ? undefined : new ExchangeTally(context.observer);
    this.peer = context.clients.peer(peerAddressOf(socket));
    this.ip = this.peer.text;
    this.client = this.peer.address;
    // Behind a trusted proxy X-Real-IP names the forwarded client, so it is written per request.
    const realIp = this.peer.trusted ? "" : `X-Real-IP: ${this.ip}\r\n`;
    this.forwardedFixed = `${realIp}X-Forwarded-Proto: ${proto}\r\nX-Forwarded-Port: ${socket.localPort ?? ""}\r\n`;
    socket.on("data", this.onData);
    socket.on("drain", this.onDrain);
    socket.on("end", this.onEnd);
    socket.on("close", this.onClose);
    socket.on("error", this.onError);
    this.idle = new IdleTimer(this.onTimeout, () => socket.writableLength);
    this.idle.set(CLIENT_IDLE_MS);
  }

  /** Closes the connection if it is between requests (shutdown). */
  closeIfIdle(): void {
    if (this.phase === Phase.Head && this.buffered === undefined) this.socket.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private readonly onData = (data: Buffer): void => {
    this.idle.touch();
    if (this.phase === Phase.Body) {
      this.sendBody(data);
      return;
    }
    // Closing: what still comes is dropped unread.
    if (this.phase === Phase.Closed) return;
    if (this.phase === Phase.Head) {
      this.appendHead(data);
      this.readHead();
      return;
    }
    this.buffered = this.buffered === undefined ? data : Buffer.concat([this.buffered, data]);
    // While a response is on its way, a pipelined request waits unread.
    this.socket.pause();
  };

  /** Adds bytes to the unfinished head: into spare room of `store`, which doubles when full. */
  private appendHead(data: Buffer): void {
    const old = this.buffered;
    if (old === undefined) {
      this.buffered = data;
      return;
    }
    const need = old.length + data.length;
    let store = this.store;
    const inStore =
      store !== undefined && old.buffer === store.buffer && old.byteOffset === store.byteOffset;
    if (!inStore || need > store!.length) {
      store = Buffer.allocUnsafeSlow(Math.max(need * 2, 4096));
      old.copy(store, 0);
      this.store = store;
    }
    data.copy(store!, old.length);
    this.buffered = store!.subarray(0, need);
  }

  private readonly onDrain = (): void => {
    if (this.phase === Phase.Response) this.upstream?.socket.resume();
  };

  private readonly onEnd = (): void => {
    // Between requests, or with half a head that can no longer complete: close.
    if (this.phase === Phase.Head) this.socket.end();
    else this.closeAfter = true;
  };

  /**
   * A silent client between requests is closed; one that has not finished its head in time, or
   * stalls while its body is due, is answered 408. Waiting for the upstream is timed upstream.
   */
  private readonly onTimeout = (): void => {
    if (this.phase === Phase.Head) {
      if (this.buffered === undefined) this.socket.destroy();
      else this.refuse(HEAD_TIMEOUT);
    } else if (this.phase === Phase.Body) {
      // Paused by the upstream's backpressure: the client is not the one stalling.
      if (!this.socket.isPaused() && this.bodyDue()) this.refuse(BODY_TIMEOUT);
    } else if (this.phase === Phase.Closed) {
      this.socket.destroy();
    }
  };

  private readonly onClose = (): void => {
    this.idle.stop();
    // An exchange cut short: nginx's 499 when the client left before the answer.
    this.tally?.finish(this.responded ? this.status : 499);
    this.releaseSlot();
    this.phase = Phase.Closed;
    this.dropUpstream();
    this.context.forget(this);
  };

  private readonly onError = (): void => {
    this.socket.destroy();
  };

  /** Empty lines before a request line are ignored (RFC 9112 2.2). */
  private skipEmptyLines(data: Buffer): Buffer | undefined {
    let skip = 0;
    while (data[skip] === 13 && data[skip + 1] === 10) skip += 2;
    if (skip === 0) return data;
    this.buffered = skip < data.length ? data.subarray(skip) : undefined;
    return this.buffered;
  }

  private readHead(): void {
    let data = this.buffered;
    if (data !== undefined && this.scanned === 0 && data[0] === 13)
      data = this.skipEmptyLines(data);
    if (data === undefined) return;
    const end = findHeadEnd(data, this.scanned);
    const limits = this.limits;
    if (end === -2) {
      this.refuse(BARE_LF);
      return;
    }
    if (end < 0 ? data.length > limits.maxHeadBytes : end > limits.maxHeadBytes) {
      this.refuse(HEAD_TOO_LARGE);
      return;
    }
    if (end < 0) {
      this.headUnfinished(resumeAt(data));
      return;
    }
    const head = parseRequestHead(data.toString("latin1", 0, end), limits);
    if (head === undefined) {
      this.headDone();
      this.handOver();
      return;
    }
    if (isRefusal(head)) this.refuse(head);
    else this.headParsed(head, data, end);
  }

  /** A whole head in `data` up to `end`: its exchange starts, or Node's path takes it. */
  private headParsed(head: RequestHead, data: Buffer, end: number): void {
    const main = findRoute(this.context.table(), head.host, head.target);
    this.headDone();
    if (main?.policy.bandwidth !== undefined) {
      // limit-rate paces the body on Node's path; the head goes with the connection, unread.
      this.handOver({ host: head.host, target: head.target, main });
      return;
    }
    this.buffered = end + 4 < data.length ? data.subarray(end + 4) : undefined;
    this.startExchange(head, main);
  }

  /** A head still coming: it must be whole within the head timeout from its first byte. */
  private headUnfinished(resumeFrom: number): void {
    this.scanned = resumeFrom;
    const now = Date.now();
    if (this.headStarted === 0) this.headStarted = now;
    const left = this.headStarted + this.limits.headTimeoutMs - now;
    if (left <= 0) this.refuse(HEAD_TIMEOUT);
    else this.idle.set(Math.min(left, CLIENT_IDLE_MS));
  }

  private headDone(): void {
    this.scanned = 0;
    this.store = undefined;
    if (this.headStarted !== 0) {
      this.headStarted = 0;
      this.idle.set(CLIENT_IDLE_MS);
    }
  }

  /** A request refused by the front door: counted, answered, and the connection closed. */
  private refuse(reason: Refusal): void {
    this.context.refused(reason, this.ip);
    if (this.responded || this.phase === Phase.Closed) {
      // Part of a response is out already: nothing can be answered any more.
      this.socket.destroy();
      return;
    }
    this.answer(reason.status, true);
  }

  /** Gives the connection, with its unread bytes, to Node's HTTP server. */
  private handOver(found?: Parameters<FastContext["fallback"]>[1]): void {
    const socket = this.socket;
    socket.off("data", this.onData);
    socket.off("drain", this.onDrain);
    socket.off("end", this.onEnd);
    socket.off("close", this.onClose);
    socket.off("error", this.onError);
    this.idle.stop();
    this.store = undefined;
    this.context.forget(this);
    if (this.buffered !== undefined) socket.unshift(this.buffered);
    this.buffered = undefined;
    this.context.fallback(socket, found);
  }

  private startExchange(head: RequestHead, main: Route | undefined): void {
    this.context.counters.requests++;
    this.request = head;
    this.closeAfter ||= head.close || this.context.isClosing();
    if (this.peer.trusted) this.client = this.context.clients.client(this.peer, head.forwardedFor);
    this.requestId = requestIdOf(head.requestId);
    const tally = this.tally;
    if (tally !== undefined) this.beginTally(tally, head);
    if (main === undefined) {
      this.answer(404, head.contentLength !== 0);
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
    if (main.traffic === undefined) {
      this.authPass = undefined;
      this.responseEdits = undefined;
      this.errorPages = undefined;
      this.hashKey = "";
      this.sticky = undefined;
      this.upstreamHead = this.headFor(head, head.target, head.lines, main);
    }
    this.beginExchange(route, head);
  }

  /** Starts timing the exchange; with the access log on, notes who asked. */
  private beginTally(tally: ExchangeTally, head: RequestHead): void {
    tally.begin(head.method, head.target, head.host, Math.max(0, head.contentLength));
    tally.requestId = this.requestId;
    if (!tally.logging) return;
    tally.describe({
      client: this.peer.trusted ? formatIp(this.client) : this.ip,
      peer: this.ip,
      userAgent: head.userAgent ?? "",
      scheme: this.https ? "https" : "http",
    });
  }

  /** The exchange's state, reset for a routed request; then the upstream is connected. */
  private beginExchange(route: Route, head: RequestHead): void {
    const chunked = head.contentLength < 0;
    this.route = route;
    this.tries = 0;
    this.endpoint = undefined;
    this.bodyLeft = chunked ? 0 : head.contentLength;
    this.requestChunks = chunked ? new ChunkedScanner() : undefined;
    this.bodySent = false;
    this.upstreamSpoke = false;
    this.retryable = head.contentLength === 0 && isIdempotent(head.method);
    this.responded = false;
    this.responseHead = undefined;
    this.phase = Phase.Body;
    if (this.bodyDue()) this.idle.set(this.limits.bodyTimeoutMs);
    this.connectUpstream();
  }

  /** Request body bytes are still to come from the client. */
  private bodyDue(): boolean {
    return this.requestChunks !== undefined || this.bodyLeft > 0;
  }

  /** The upstream head; the route's upstream-vhost and x-forwarded-prefix edits applied. */
  private headFor(head: RequestHead, target: string, clientLines: string, main: Route): string {
    const edits = main.policy.upstream?.requestEdits;
    const lines = edits === undefined ? clientLines : editHeaderLines(clientLines, edits);
    const xff = head.forwardedFor === undefined ? this.ip : `${head.forwardedFor}, ${this.ip}`;
    const realIp = this.peer.trusted ? `X-Real-IP: ${formatIp(this.client)}\r\n` : "";
    return `${head.method} ${target} HTTP/1.1\r\n${lines}X-Request-ID: ${this.requestId}\r\nX-Forwarded-For: ${xff}\r\n${realIp}${this.forwardedFixed}X-Forwarded-Host: ${head.host ?? ""}\r\n\r\n`;
  }

  /**
   * The route's traffic policy, decided once: answers here (undefined returned) or sets the
   * upstream head and response edits and returns the route that serves (main or a canary).
   */
  private applyPolicy(main: Route, head: RequestHead): Route | undefined {
    const facts = new HeadLinesFacts(head, this.https);
    facts.client = this.client;
    const plan = planRequest(main, main.traffic!, facts);
    if (plan.kind === "verify") {
      this.awaitVerdict(main, head, plan, facts);
      return undefined;
    }
    return this.followPlan(main, head, plan, facts);
  }

  /**
   * A password is checked off the event loop: the connection holds what the client sends (as
   * while a response is on its way) until the verdict, then answers or starts the exchange.
   */
  private awaitVerdict(
    main: Route,
    head: RequestHead,
    plan: Extract<Plan, { kind: "verify" }>,
    facts: HeadLinesFacts,
  ) {
    this.phase = Phase.Response;
    void plan.pending.then(verdict => {
      const next = plan.resume(verdict);
      if (this.phase === Phase.Closed) {
        if (next.kind === "proxy") next.release?.();
        return;
      }
      const route = this.followPlan(main, head, next, facts);
      if (route === undefined) return;
      this.beginExchange(route, head);
      if (this.phase === Phase.Body) this.socket.resume();
    });
  }

  /** Answers the plan's own answer (undefined returned), or readies the exchange it proxies. */
  private followPlan(
    main: Route,
    head: RequestHead,
    plan: Plan,
    facts: HeadLinesFacts,
  ): Route | undefined {
    if (plan.kind === "verify") return undefined;
    if (plan.kind === "answer") {
      this.ownAnswer(main, head, plan.answer, plan.decision);
      return undefined;
    }
    this.tally?.routed(plan.route, plan.variant, plan.decision);
    this.slot = plan.release;
    const auth = main.traffic!.auth;
    if (auth !== undefined) {
      this.authorize(auth, facts, plan, main);
      return undefined;
    }
    return this.proxyWith(plan, main, undefined);
  }

  /** The traffic policy's own answer (a redirect, a refusal); the exchange ends with it. */
  private ownAnswer(main: Route, head: RequestHead, answer: OwnAnswer, decision: string): void {
    this.tally?.routed(main, "main", decision);
    const close = this.closeAfter || head.contentLength !== 0;
    this.answer(answer.status, close, ownResponseText(answer, close, head.method === "HEAD"));
  }

  /**
   * auth-url: the request waits (its body unread: what comes is kept, the socket paused) for the
   * auth server's verdict, then is answered or proxied with the verdict's headers.
   */
  private authorize(auth: ExternalAuth, facts: HeadLinesFacts, plan: ProxyPlan, main: Route): void {
    const head = this.request!;
    this.phase = Phase.Response;
    this.socket.pause();
    const input = {
      facts,
      headers: pairsOfLines(head.lines),
      clientIp: formatIp(this.client),
      requestId: this.requestId,
    };
    void auth.authorize(input).then(verdict => {
      // The client left (or the connection was refused) while the auth server was asked.
      if (this.phase === Phase.Closed || this.request !== head) return;
      if (verdict.kind === "answer") {
        this.ownAnswer(main, head, verdict.answer, verdict.decision);
        return;
      }
      const route = this.proxyWith(plan, main, verdict);
      this.socket.resume();
      this.beginExchange(route, head);
    });
  }

  /** Sets the upstream head and response edits for the plan (and a passing auth verdict). */
  private proxyWith(plan: ProxyPlan, main: Route, pass: AuthPass | undefined): Route {
    const head = this.request!;
    const sent = plan.dropAuthorization
      ? withoutHeaderLines(head.lines, AUTHORIZATION)
      : head.lines;
    const edited = hasEdits(plan.request) ? editHeaderLines(sent, plan.request) : sent;
    const lines = pass === undefined ? edited : authorizedLines(edited, pass);
    this.authPass = pass;
    this.upstreamHead = this.headFor(head, plan.target, lines, main);
    this.responseEdits = hasEdits(plan.response) ? plan.response : undefined;
    this.errorPages = plan.errorPages;
    this.hashKey = plan.hashKey;
    this.sticky = plan.sticky;
    return plan.route;
  }

  /** The endpoint of the next try; undefined when none may be tried. */
  private nextEndpoint(route: Route): Endpoint | undefined {
    // A gRPC backend is called over HTTP/2 only, for HTTP/2 clients (grpc/forward.ts).
    if (route.policy.upstream?.grpc === true) return undefined;
    return this.sticky === undefined
      ? route.backend.pickBy(route.policy.balance, this.hashKey, this.endpoint)
      : this.sticky.pick(this.endpoint);
  }

  private connectUpstream(): void {
    const route = this.route!;
    const balance = route.policy.balance;
    const endpoint = this.nextEndpoint(route);
    if (endpoint === undefined) {
      this.answer(502, this.bodyDue());
      return;
    }
    this.endpoint = endpoint;
    this.tries++;
    this.sentAt = balance?.kind === "ewma" ? performance.now() : -1;
    this.tally?.sent(endpoint.key);
    const policy = route.policy;
    const tls =
      policy.upstream === undefined ? undefined : upstreamTlsFor(policy.upstream, this.https);
    const upstream = this.context.pool.acquire(endpoint, this, policy.connectTimeoutMs, tls);
    this.upstream = upstream;
    if (upstream.connected) upstream.setTimeout(policy.sendTimeoutMs);
    upstream.send(this.upstreamHead, "latin1");
    const rest = this.buffered;
    this.buffered = undefined;
    if (!this.bodyDue()) {
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
    const take = this.bodyBytesIn(data);
    if (take < 0) {
      this.refuse(take === -2 ? BAD_CHUNKS : BODY_TOO_LARGE);
      return;
    }
    const fits = upstream.send(take === data.length ? data : data.subarray(0, take));
    if (take < data.length) this.buffered = data.subarray(take);
    if (!this.bodyDue()) this.requestSent();
    else if (!fits) this.socket.pause();
  }

  /**
   * How many bytes of `data` belong to the request body (the rest is the next request); -2 for
   * malformed chunked framing, -3 for a chunked body over the route's limit.
   */
  private bodyBytesIn(data: Buffer): number {
    const chunks = this.requestChunks;
    if (chunks === undefined) {
      const take = Math.min(this.bodyLeft, data.length);
      this.bodyLeft -= take;
      return take;
    }
    const stop = chunks.scan(data, 0);
    if (stop === -2) return -2;
    const limit = this.route?.policy.bodyLimit;
    if (limit !== undefined && chunks.payload > limit) return -3;
    if (this.tally !== undefined) this.tally.requestBytes = chunks.payload;
    if (stop < 0) return data.length;
    this.requestChunks = undefined;
    return stop;
  }

  /** The whole request is upstream: wait for the answer with the read timeout. */
  private requestSent(): void {
    this.phase = Phase.Response;
    this.idle.set(CLIENT_IDLE_MS);
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

  onUpstreamData(data: Buffer): boolean {
    this.takeUpstreamData(data);
    // The bytes outlive this call only in a head kept for its rest or a write not yet flushed.
    return this.responseHead !== undefined || this.socket.writableLength !== 0;
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
    this.responseHead = undefined;
    this.context.counters.upstreamErrors++;
    this.answer(502, this.bodyDue() || this.closeAfter);
  }

  private startResponse(data: Buffer, end: number): void {
    const parsed = parseResponseHead(
      data.toString("latin1", 0, end),
      this.request?.method === "HEAD",
    );
    if (parsed === undefined) {
      this.badResponse();
      return;
    }
    if (parsed.status >= 100 && parsed.status < 200) {
      // Informational (103 Early Hints): pass it on and wait for the final head.
      this.socket.write(`${parsed.head}\r\n\r\n`, "latin1");
      if (end + 4 < data.length) this.takeUpstreamData(data.subarray(end + 4));
      return;
    }
    this.tally?.answered(parsed.status);
    if (this.intercepts(parsed.status)) {
      this.replaceAnswer(this.errorPages!, parsed.status);
      return;
    }
    this.responded = true;
    // An answer before the whole body came: the rest is dropped, and the connection closes.
    if (this.bodyDue()) this.closeAfter = true;
    if (this.sentAt >= 0) EWMA_STATS.record(this.endpoint!.key, performance.now() - this.sentAt);
    this.status = parsed.status;
    this.body.begin(parsed);
    this.upstreamReusable = !parsed.upstreamCloses;
    if (parsed.framing === "close") this.closeAfter = true;
    this.responseEdits = withAuthCookies(this.responseEdits, this.authPass, parsed.status);
    this.sendFirst(this.clientHead(parsed.head), data, end + 4);
  }

  /** A custom-http-errors status, with the whole request sent (a body still coming is not asked twice). */
  private intercepts(status: number): boolean {
    return this.errorPages?.codes.has(status) === true && !this.bodyDue();
  }

  /**
   * custom-http-errors: the backend's answer is dropped with its connection, and the request is
   * asked of the default backend (error-pages.ts), or answered with the gateway's own page.
   */
  private replaceAnswer(pages: ErrorPages, status: number): void {
    const head = this.request!;
    this.errorPages = undefined;
    this.responseEdits = undefined;
    this.sticky = undefined;
    this.dropUpstream();
    const backend = pages.backend;
    this.tally?.routed(backend ?? this.route!, "main", "custom-error");
    if (backend === undefined) {
      this.answer(status, this.closeAfter);
      return;
    }
    const accept = headerInLines(head.lines, "accept");
    const set = errorHeaders(pages.about, status, { target: head.target, accept }, true);
    const lines = editHeaderLines(withoutHeaderLines(head.lines, BODY_HEADERS), { set, add: [] });
    this.upstreamHead = this.headFor(head, errorTarget(head.target), lines, backend);
    this.beginExchange(backend, { ...head, contentLength: 0 });
  }

  /**
   * The response head with the body bytes that came with it: one write. A small body is copied
   * behind the head into one buffer (cheaper than corking two writes into a writev); a larger one
   * goes in a corked writev.
   */
  private sendFirst(head: string, data: Buffer, start: number): void {
    const stop = this.body.framing === "none" ? start : this.body.stop(data, start);
    if (stop === -2) {
      // Nothing is out yet: the client gets a clean 502 instead of a broken body.
      this.responded = false;
      this.badResponse();
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
    const cookie = this.sticky?.setCookie;
    const sticky = cookie === undefined ? "" : `\r\nSet-Cookie: ${cookie}`;
    return `${edited}${sticky}${this.closeAfter ? "\r\nConnection: close" : ""}\r\n\r\n`;
  }

  private forwardBody(data: Buffer, start: number): void {
    const stop = this.body.stop(data, start);
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
    tally.responseBytes = this.body.chunks?.payload ?? tally.responseBytes + bytes;
  }

  /** limit-connections: the client's slot is free once the exchange ends, however it ends. */
  private releaseSlot(): void {
    const release = this.slot;
    if (release === undefined) return;
    this.slot = undefined;
    release();
  }

  private finishExchange(upstreamSentExtra: boolean): void {
    this.tally?.finish(this.status);
    this.releaseSlot();
    this.responded = false;
    const upstream = this.upstream;
    this.upstream = undefined;
    if (upstream !== undefined) {
      if (this.upstreamReusable && !upstreamSentExtra && !this.bodyDue()) {
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
      this.close();
      return;
    }
    this.phase = Phase.Head;
    // The answer's last write was the connection's last activity: keep-alive counts from it.
    this.idle.touch();
    this.socket.resume();
    // A pipelined request waits for the next turn, so a long pipeline cannot grow the stack.
    if (this.buffered !== undefined) setImmediate(this.readPipelined);
  }

  private readonly readPipelined = (): void => {
    if (this.phase === Phase.Head) this.readHead();
  };

  /**
   * Ends the connection after the last answer. Bytes still coming (a body not read to its end,
   * requests after the last one) are read and dropped for a while, as nginx's lingering close
   * does, so the client is not reset before it has read the answer; never parsed.
   */
  private close(): void {
    const lingering = this.bodyDue() || this.buffered !== undefined;
    this.phase = Phase.Closed;
    this.buffered = undefined;
    this.requestChunks = undefined;
    this.bodyLeft = 0;
    this.socket.end();
    if (!lingering) return;
    this.socket.resume();
    this.idle.set(LINGER_IDLE_MS);
    setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
  }

  onUpstreamGone(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): void {
    if (connection !== this.upstream) return;
    this.upstream = undefined;
    if (this.responded) {
      // A close-delimited body ends with the connection; anything else was cut short.
      if (this.body.framing === "close" && error === undefined) this.finishExchange(false);
      else this.socket.destroy();
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
    this.answer(timeout ? 504 : 502, this.bodyDue() || this.closeAfter);
  }

  private mayRetry(
    connection: UpstreamConnection,
    error: (Error & { code?: string }) | undefined,
  ): boolean {
    if (!this.retryable || this.bodySent || this.upstreamSpoke) return false;
    // A pooled connection the upstream had closed: the request never reached the application.
    if (connection.reused && error?.code !== READ_TIMEOUT) return true;
    const route = this.route!;
    const more = this.tries < Math.min(route.policy.tries, route.backend.endpoints.length);
    return more && isConnectFailure(error?.code);
  }

  /** The gateway's own answer (`text`: a whole response, else a plain one); the exchange ends with it. */
  private answer(status: number, close: boolean, text?: string): void {
    this.tally?.finish(status);
    this.releaseSlot();
    this.closeAfter ||= close;
    this.dropUpstream();
    this.route = undefined;
    this.request = undefined;
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
