// The data plane inside one process: the HTTP and HTTPS listeners, the current routing table and
// certificates (one reference each, swapped by apply), the upstream pools, and a graceful close.
import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type {
  Http2ServerRequest,
  Http2ServerResponse,
  IncomingHttpHeaders,
  ServerHttp2Stream,
} from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { DEFAULT_OBSERVE, TrafficObservers, type ObserveOptions } from "../observability/observer";
import { requestIdOf } from "../observability/request-id";
import { ExchangeTally } from "../observability/tally";
import {
  editFlatHeaders,
  hasEdits,
  ownAnswerHeaders,
  ownResponseText,
  withoutFlatHeaders,
  type OwnAnswer,
} from "../policy/head-edits";
import { NodeHeadersFacts } from "../policy/request-values";
import { formatIp, type Address } from "../../core/net/ip";
import { ClientAddresses, type Peer } from "../policy/client-address";
import { acceptProxyHeader, peerAddressOf } from "./proxy-protocol";
import { planRequest, type Plan, type ProxyPlan } from "../policy/route-traffic";
import {
  authorizedFlat,
  pairsOfRaw,
  withAuthCookies,
  type AuthInput,
  type AuthPass,
} from "../policy/external-auth";
import { compileRoutes, DEFAULT_COMPILE_OPTIONS, type CompileOptions } from "../routing/compile";
import { IncrementalRoutes } from "../routing/incremental";
import {
  findHost,
  findRoute,
  forEachHostRoute,
  forEachRoute,
  normalizeHost,
  type HostRoutes,
  type Route,
  type RouteTable,
} from "../routing/table";
import { poolKey, upstreamTlsFor, type UpstreamPolicy } from "../routing/upstream";
import { compileTls, PairInspections } from "../tls/compile";
import type { PemPair } from "../tls/default-certificate";
import { chooseCertificatePerClient, type H2Side } from "../tls/listener";
import { CertificateStore } from "../tls/store";
import type { AppliedView, GatewayView } from "../view";
import { Exchange, type ExchangeContext, type ProxyCounters } from "./forward";
import { forwardGrpc, grpcCallHeaders } from "./grpc/forward";
import { GrpcSessions } from "./grpc/sessions";
import { grpcCodeFor, isGrpcRequest, trailersOnly } from "./grpc/status";
import { clientIp, upstreamRequestHeaders, type ClientInfo } from "./headers";
import { checkNodeRequest, type CheckedRequest } from "./node-request";
import {
  DEFAULT_FRONT_DOOR,
  isRefusal,
  refusal,
  type FrontDoorLimits,
  type Refusal,
} from "./request-rules";
import { UpstreamPools } from "./pools";
import { reply, replyOnSocket } from "./replies";
import { forwardUpgrade } from "./upgrade";
import { ClientConnection, type FastContext } from "./fast/connection";
import { UpstreamPool } from "./fast/upstream";
import { H2Front, type H2StreamHead } from "./h2/front";
import {
  answerOnStream,
  bodyLengthOf,
  H2Exchange,
  splitsHead,
  takesStream,
  upstreamHeadText,
  type H2Proxied,
} from "./h2/exchange";
import { acceptsTrailers } from "./h2/trailers";
import { asksOnlyH2c, handToH2, headWithoutH2cUpgrade, sniffPreface } from "./h2/cleartext";
import { checkH2Request, http1FieldsOf } from "./h2/request";
import { RouteLookups } from "./route-lookups";

export interface EngineOptions {
  httpPort: number;
  httpsPort?: number;
  host: string;
  /** The certificates for unknown server names (see tls/default-certificate.ts). */
  defaultCertificates: PemPair[];
  /** Canary cap and traffic policy settings; ingress-nginx's and Tengine's defaults when unset. */
  compile?: CompileOptions;
  /** Metrics and access log switches (default: metrics on, access log off). */
  observe?: ObserveOptions;
  /** Head and body deadlines and sizes, underscores in header names (nginx's defaults). */
  frontDoor?: FrontDoorLimits;
  /** Bind the listeners with SO_REUSEPORT, a socket per worker (listen-mode.ts). */
  reusePort?: boolean;
  /** Every HTTP/2 stream takes Node's path (data-plane.ts says why). */
  h2NodePathOnly?: boolean;
}

const EMPTY_TABLE: RouteTable = {
  version: -1,
  exactHosts: new Map(),
  wildcardHosts: new Map(),
  anyHost: undefined,
  stats: { hosts: 0, wildcardHosts: 0, routes: 0, backends: 0, endpoints: 0 },
};

/** nginx's keepalive_timeout default: idle client connections close after 75 s. */
const CLIENT_KEEPALIVE_MS = 75_000;

function listen(server: Server, port: number, host: string, reusePort = false): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // reusePort (Node >= 22.12) makes a cluster worker bind its own socket instead of the primary's.
    server.listen({ port, host, reusePort }, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function tune(server: Server, limits: FrontDoorLimits): void {
  server.keepAliveTimeout = CLIENT_KEEPALIVE_MS;
  server.headersTimeout = limits.headTimeoutMs;
  // Node drops fields past its count limit (2000) without a word; the head's size limit bounds it.
  server.maxHeadersCount = 0;
  // Uploads and downloads may stream for as long as they make progress.
  server.requestTimeout = 0;
}

export class Engine {
  readonly counters: ProxyCounters = {
    requests: 0,
    retries: 0,
    upstreamErrors: 0,
    timeouts: 0,
    refused: {},
  };
  private table: RouteTable = EMPTY_TABLE;
  private problems: string[] = [];
  private readonly pools = new UpstreamPools();
  /** HTTP/2 connections to gRPC backends, multiplexed (grpc/sessions.ts). */
  private readonly grpcSessions = new GrpcSessions();
  private readonly certificates: CertificateStore;
  /** Parsed key pairs, reused by the next view's TLS compile. */
  private readonly inspections = new PairInspections();
  private readonly servers: Server[] = [];
  private readonly upgraded = new Set<Duplex>();
  private readonly fastPool = new UpstreamPool();
  /** The h2 raw-pool path shares the fast path's upstream connections. */
  private readonly h2Context = { pool: this.fastPool, counters: this.counters };
  private readonly fastConnections = new Set<ClientConnection>();
  /** HTTP/2 sessions of the HTTPS listener and h2c ones; undefined when both are off. */
  private h2: H2Front | undefined = undefined;
  /** HTTP port connections whose first bytes are still read for the h2c preface. */
  private readonly sniffing = new Set<Socket>();
  /** Routes found by the fast or h2 raw path for requests they leave to Node's path. */
  private readonly lookups = new RouteLookups();
  /** Per host of the current table: whether its Ingresses let the listener offer HTTP/2. */
  private h2Hosts = new WeakMap<HostRoutes, boolean>();
  closing = false;
  httpPort = 0;
  httpsPort: number | undefined = undefined;
  /** Metrics and access log of this process; undefined when both are off. */
  readonly observers: TrafficObservers | undefined;
  private readonly compileOptions: CompileOptions;
  private readonly limits: FrontDoorLimits;
  private readonly clients: ClientAddresses;
  private readonly peers = new WeakMap<Socket, Peer>();
  /** Recompiles only the hosts a view changes (routing/incremental.ts). */
  private readonly routes = new IncrementalRoutes({
    compile: view => compileRoutes(view, this.compileOptions),
  });

  private constructor(options: EngineOptions) {
    this.certificates = new CertificateStore(options.defaultCertificates);
    this.compileOptions = options.compile ?? DEFAULT_COMPILE_OPTIONS;
    this.limits = options.frontDoor ?? DEFAULT_FRONT_DOOR;
    this.clients = new ClientAddresses(this.limits.trustedProxies);
    this.observers = TrafficObservers.create(options.observe ?? DEFAULT_OBSERVE);
  }

  static async start(options: EngineOptions): Promise<Engine> {
    const engine = new Engine(options);
    const serverOptions = {
      // Node's own head limit: the front door's, so both paths refuse the same heads (431).
      maxHeaderSize: engine.limits.maxHeadBytes,
      // How often Node checks its head deadline (default 30 s: a slow head could last 90 s).
      connectionsCheckingInterval: Math.min(
        30_000,
        Math.max(1000, engine.limits.headTimeoutMs / 4),
      ),
      requireHostHeader: true,
    };
    engine.h2 = engine.createH2Front(options.h2NodePathOnly !== true);
    const http = createServer(serverOptions);
    engine.attach(http, "http");
    engine.httpPort = await listen(http, options.httpPort, options.host, options.reusePort);
    if (options.httpsPort !== undefined) {
      const https = createHttpsServer(serverOptions);
      chooseCertificatePerClient(https, engine.certificates, engine.startH2());
      engine.attach(https, "https");
      engine.httpsPort = await listen(https, options.httpsPort, options.host, options.reusePort);
    }
    return engine;
  }

  get version(): number | undefined {
    return this.table === EMPTY_TABLE ? undefined : this.table.version;
  }

  get lastProblems(): string[] {
    return this.problems;
  }

  get stats(): RouteTable["stats"] {
    return this.table.stats;
  }

  /** Compiles the view and swaps it in; requests already routed keep their route. */
  apply(view: GatewayView, now = new Date()): AppliedView {
    const routes = this.routes.compile(view);
    const tls = compileTls(view, now, this.inspections);
    this.certificates.swap(tls.table);
    this.table = routes.table;
    this.h2Hosts = new WeakMap();
    const live = new Set<string>();
    // "" labels requests no route matched.
    const hosts = new Set<string>([""]);
    forEachRoute(routes.table, route => {
      hosts.add(route.host);
      addPoolKeys(live, route);
    });
    this.observers?.metrics?.retainHosts(hosts);
    this.pools.retain(live);
    this.fastPool.closeIdle(live);
    this.problems = [...routes.problems, ...tls.problems];
    return { version: view.version, problems: this.problems };
  }

  /** Stops accepting, lets in-flight exchanges finish for up to drainMs, then closes the rest. */
  async close(drainMs = 10_000): Promise<void> {
    this.closing = true;
    const closed = Promise.all(
      this.servers.map(server => new Promise<void>(resolve => server.close(() => resolve()))),
    );
    const closeIdle = () => {
      for (const server of this.servers) server.closeIdleConnections();
      for (const connection of this.fastConnections) connection.closeIfIdle();
      this.h2?.closeIdle();
      this.pools.closeIdle();
      this.fastPool.closeIdle();
    };
    closeIdle();
    const poll = setInterval(closeIdle, 100);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>(resolve => (timer = setTimeout(resolve, drainMs)));
    await Promise.race([closed, deadline]);
    clearInterval(poll);
    clearTimeout(timer);
    for (const server of this.servers) server.closeAllConnections();
    for (const socket of this.upgraded) socket.destroy();
    for (const connection of this.fastConnections) connection.destroy();
    for (const socket of this.sniffing) socket.destroy();
    this.h2?.destroy();
    await closed;
    this.observers?.flush();
    this.fastPool.closeIdle();
    this.pools.destroy();
    this.grpcSessions.closeAll();
  }

  private attach(server: Server, proto: "http" | "https"): void {
    tune(server, this.limits);
    const nodeServes = this.installFastPath(server, proto);
    this.servers.push(server);
    // The listener's port, known once listening; read per request from the socket.
    server.on("request", (req: IncomingMessage, res: ServerResponse) =>
      this.onRequest(req, res, proto),
    );
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (asksOnlyH2c(req.headers.upgrade))
        ignoreH2cUpgrade(req, socket as Socket, head, nodeServes);
      else this.onUpgrade(req, socket, head, proto);
    });
    if (this.limits.proxyProtocol) this.requireProxyHeader(server);
    server.on("clientError", (error: Error & { code?: string }, socket: Duplex) => {
      const refused = nodeRefusal(error.code);
      this.refused(refused, clientIp(peerAddressOf(socket as Socket)));
      if (socket.writable) replyOnSocket(socket, refused.status);
      else socket.destroy();
    });
  }

  /**
   * Every connection's PROXY header is read before the listener's own handler (the fast path, or
   * the TLS listener's ClientHello reader) sees its first byte.
   */
  private requireProxyHeader(server: Server): void {
    const handlers = server.listeners("connection") as ((socket: Socket) => void)[];
    server.removeAllListeners("connection");
    server.on("connection", (socket: Socket) =>
      acceptProxyHeader(
        socket,
        this.limits.headTimeoutMs,
        accepted => {
          for (const handler of handlers) handler.call(server, accepted);
        },
        () => this.refused(PROXY_HEADER_REFUSAL, clientIp(socket.remoteAddress)),
      ),
    );
  }

  /**
   * Connections start on the fast path (fast/connection.ts); what it does not handle goes to the
   * Node HTTP server's own connection listener (returned), and from there to onRequest/onUpgrade.
   * With h2c on, an HTTP port connection that begins with the client preface goes to the h2 front.
   */
  private installFastPath(server: Server, proto: "http" | "https"): (socket: Socket) => void {
    const event = proto === "http" ? "connection" : "secureConnection";
    const nodeListener = server.listeners(event)[0] as (socket: Socket) => void;
    server.removeAllListeners(event);
    const context: FastContext = {
      table: () => this.table,
      pool: this.fastPool,
      counters: this.counters,
      observer: this.observers,
      isClosing: () => this.closing,
      fallback: (socket, found) => {
        if (found !== undefined)
          this.lookups.remember(socket, found.host, found.target, found.main);
        nodeListener.call(server, socket);
      },
      forget: connection => this.fastConnections.delete(connection),
      limits: this.limits,
      clients: this.clients,
      refused: (reason, client) => this.refused(reason, client),
    };
    const startFast = (socket: Socket) => {
      this.fastConnections.add(new ClientConnection(socket, context, proto));
    };
    const h2c = proto === "http" && this.limits.http2Cleartext === true ? this.h2 : undefined;
    server.on(event, (socket: Socket) => {
      socket.setNoDelay(true);
      if (h2c === undefined) startFast(socket);
      else this.sniffH2c(socket, h2c, startFast);
    });
    return context.fallback;
  }

  /** h2c prior knowledge: the preface goes to the h2 front, anything else to the fast path. */
  private sniffH2c(socket: Socket, h2: H2Front, startFast: (socket: Socket) => void): void {
    this.sniffing.add(socket);
    sniffPreface(socket, this.limits.headTimeoutMs, (sniffed, protocol) => {
      this.sniffing.delete(sniffed);
      if (sniffed.destroyed) return;
      if (protocol === "h2") {
        handToH2(sniffed, socket => h2.accept(socket));
        return;
      }
      startFast(sniffed);
      sniffed.resume();
    });
    socket.once("close", () => this.sniffing.delete(socket));
  }

  private clientInfo(req: IncomingMessage, proto: string): RequestClient {
    return this.clientOf(req.socket, req.headers, proto);
  }

  /** A connection's peer, parsed once (an HTTP/2 session's streams all share it). */
  private peerOf(socket: Socket): Peer {
    let peer = this.peers.get(socket);
    if (peer === undefined) {
      peer = this.clients.peer(peerAddressOf(socket));
      this.peers.set(socket, peer);
    }
    return peer;
  }

  /** Who asks, on this connection with these headers (an HTTP/1.1 request's or an h2 stream's). */
  private clientOf(
    socket: Socket,
    headers: Record<string, string | string[] | undefined>,
    proto: string,
  ): RequestClient {
    const peer = this.peerOf(socket);
    const address = this.clients.client(peer, headerText(headers["x-forwarded-for"]));
    const ip = peer.trusted ? formatIp(address) : peer.text;
    const port = String(socket.localPort ?? "");
    const requestId = requestIdOf(headerText(headers["x-request-id"]));
    return { ip, peer: peer.text, address, proto, port, requestId };
  }

  /** Starts timing the exchange; it is recorded when the response closes (499: the client left first). */
  private tallyFor(req: IncomingMessage, res: ServerResponse): ExchangeTally | undefined {
    const tally = this.beginTally(req);
    res.once("close", () => tally?.finish(res.headersSent ? res.statusCode : 499));
    return tally;
  }

  /** A tally started for this request; undefined when nothing observes traffic. */
  private beginTally(req: IncomingMessage): ExchangeTally | undefined {
    if (this.observers === undefined) return undefined;
    const tally = new ExchangeTally(this.observers);
    tally.begin(req.method ?? "GET", req.url ?? "/", req.headers.host);
    // "2.0" on an HTTP/2 stream (Node's compatibility request), else what the request line said.
    tally.protocol = `HTTP/${req.httpVersion}`;
    return tally;
  }

  /** Counts (by reason) and logs a request the front door refused. */
  private refused(reason: Refusal, client: string): void {
    const refused = this.counters.refused;
    refused[reason.reason] = (refused[reason.reason] ?? 0) + 1;
    this.observers?.refused(reason, client);
  }

  /**
   * The h2 front, for HTTP/2 on the HTTPS listener (unless BULWARK_HTTP2 turned it off) and h2c
   * on the HTTP port (when BULWARK_HTTP2_CLEARTEXT turned it on): one front, one set of limits.
   * `rawPath`: streams of plain routes take h2/exchange.ts (off only where tests compare paths).
   */
  private createH2Front(rawPath: boolean): H2Front | undefined {
    if (this.limits.http2 === false && this.limits.http2Cleartext !== true) return undefined;
    return new H2Front({
      limits: { ...this.limits, idleMs: CLIENT_KEEPALIVE_MS },
      onStream: rawPath ? (stream, head) => this.onH2Stream(stream, head) : undefined,
      onRequest: (req, res, proto) => this.onH2Request(req, res, proto),
      onAbuse: reason => this.refusedConnection(reason),
    });
  }

  /** HTTP/2 next to HTTP/1.1 on the HTTPS listener, unless BULWARK_HTTP2 turned it off. */
  private startH2(): H2Side | undefined {
    const front = this.h2;
    if (this.limits.http2 === false || front === undefined) return undefined;
    return { offers: name => this.offersH2(name), accept: socket => front.accept(socket) };
  }

  /** bulwark.dev/http2: "false" on any Ingress of the SNI name's host offers it HTTP/1.1 only. */
  private offersH2(serverName: string | undefined): boolean {
    const routes = findHost(this.table, normalizeHost(serverName));
    if (routes === undefined) return true;
    let offered = this.h2Hosts.get(routes);
    if (offered === undefined) {
      offered = true;
      forEachHostRoute(routes, route => {
        if (route.annotations?.http2?.enabled === false) offered = false;
      });
      this.h2Hosts.set(routes, offered);
    }
    return offered;
  }

  /** A connection closed for abuse, counted with the refusals by its reason (no answer, no log). */
  private refusedConnection(reason: string): void {
    this.counters.refused[reason] = (this.counters.refused[reason] ?? 0) + 1;
    this.observers?.metrics?.refused(reason);
  }

  /**
   * An HTTP/2 request stream on a route the raw-pool path serves (h2/exchange.ts): proxied there,
   * true returned; false leaves it to the compatibility layer and onH2Request.
   */
  private onH2Stream(stream: ServerHttp2Stream, head: H2StreamHead): boolean {
    const { headers, rawHeaders, socket, proto } = head;
    const checked = checkH2Request(rawHeaders, stream.endAfterHeaders, this.limits);
    if (isRefusal(checked)) return false;
    const main = findRoute(this.table, checked.host, checked.target);
    if (!takesStream(main, checked, headers)) return this.leftToNode(stream, checked, main);
    const fields = http1FieldsOf(rawHeaders);
    // Decided before the plan, which counts the request against rate limits.
    if (splitsHead(fields)) return this.leftToNode(stream, checked, main);
    this.counters.requests++;
    const method = headers[":method"]!;
    const client = this.clientOf(socket, headers, proto);
    const tally = this.h2Tally(method, checked, client, headers);
    const request = { stream, headers, fields, method, main, checked, client, tally };
    this.followH2Plan(request, planFor(main, { method, headers }, client, checked));
    return true;
  }

  /** A stream left to the compatibility layer, which takes the route found here: false. */
  private leftToNode(stream: ServerHttp2Stream, checked: CheckedRequest, main: Route | undefined) {
    this.lookups.remember(stream, checked.host, checked.target, main);
    return false;
  }

  /** The tally of an h2 stream on the raw-pool path; undefined when nothing observes traffic. */
  private h2Tally(
    method: string,
    checked: CheckedRequest,
    client: RequestClient,
    headers: IncomingHttpHeaders,
  ): ExchangeTally | undefined {
    if (this.observers === undefined) return undefined;
    const tally = new ExchangeTally(this.observers);
    tally.begin(method, checked.target, checked.host, bodyLengthOf(headers));
    tally.protocol = "HTTP/2.0";
    describeClient(tally, client, headers["user-agent"]);
    return tally;
  }

  /** The plan of an h2 stream on the raw-pool path: answered here, or proxied by an H2Exchange. */
  private followH2Plan(request: H2Request, plan: Plan | undefined): void {
    const { stream, method, main, tally } = request;
    if (plan?.kind === "verify") {
      // The body stays unread (no 'data' listener) while the password is checked.
      void plan.pending.then(verdict => {
        const next = plan.resume(verdict);
        if (stream.closed || stream.destroyed) {
          if (next.kind === "proxy") next.release?.();
          tally?.finish(499);
          return;
        }
        this.followH2Plan(request, next);
      });
      return;
    }
    const route = noteRoute(tally, main, plan);
    if (plan?.kind === "answer") {
      answerOnStream(stream, plan.answer, method === "HEAD");
      tally?.finish(plan.answer.status);
      return;
    }
    new H2Exchange(stream, this.h2Context, this.h2Proxied(request, route, plan)).start();
  }

  /** What goes upstream for an h2 stream: the Node path's fields, target and edits. */
  private h2Proxied(request: H2Request, route: Route, plan: ProxyPlan | undefined): H2Proxied {
    const { headers, fields, method, checked, client, tally } = request;
    const raw = dropsAuthorization(plan) ? withoutFlatHeaders([...fields], AUTHORIZATION) : fields;
    const flat = withUpstreamEdits(
      upstreamRequestHeaders(raw, client, checked.host, {
        underscores: this.limits.underscoresInHeaders,
      }),
      route.policy.upstream,
    );
    const edited =
      plan !== undefined && hasEdits(plan.request) ? editFlatHeaders(flat, plan.request) : flat;
    return {
      route,
      method,
      head: upstreamHeadText(method, plan?.target ?? checked.target, edited),
      bodyLength: bodyLengthOf(headers),
      relayTrailers: acceptsTrailers(headers.te),
      https: client.proto === "https",
      tally,
      responseEdits: plan !== undefined && hasEdits(plan.response) ? plan.response : undefined,
      hashKey: plan?.hashKey ?? "",
      sticky: plan?.sticky,
      release: plan?.release,
    };
  }

  /**
   * An HTTP/2 request stream. Node's compatibility request and response offer what the Node
   * path reads of an HTTP/1.1 exchange (method, url, headers, the body as a stream, writeHead
   * with a flat list, close events); the fields and the framing come from the h2 checks.
   */
  private onH2Request(req: Http2ServerRequest, res: Http2ServerResponse, proto: string): void {
    const checked = checkH2Request(req.rawHeaders, req.stream.endAfterHeaders, this.limits);
    const fields = isRefusal(checked) ? [] : http1FieldsOf(req.rawHeaders);
    const nodeReq = req as unknown as IncomingMessage;
    const found = this.foundFor(req.stream, checked);
    this.handle(nodeReq, res as unknown as ServerResponse, { proto, checked, fields, found });
  }

  private onRequest(req: IncomingMessage, res: ServerResponse, proto: string): void {
    const checked = checkNodeRequest(req, this.limits);
    const found = this.foundFor(req.socket, checked);
    this.handle(req, res, { proto, checked, fields: req.rawHeaders, found });
  }

  /** The route the fast or h2 raw path found for this request, if it did. */
  private foundFor(carrier: object, checked: CheckedRequest | Refusal) {
    return isRefusal(checked)
      ? undefined
      : this.lookups.take(carrier, checked.host, checked.target);
  }

  /** A request the front door checked: refused, answered by the policy, or proxied. */
  private handle(req: IncomingMessage, res: ServerResponse, head: CheckedHead): void {
    const { proto, checked, fields, found } = head;
    this.counters.requests++;
    if (this.closing) res.shouldKeepAlive = false;
    const tally = this.tallyFor(req, res);
    if (isRefusal(checked)) {
      this.refused(checked, clientIp(peerAddressOf(req.socket)));
      // The body is not read: the connection closes after the answer, so no byte of it is parsed.
      reply(res, checked.status, true);
      return;
    }
    const client = this.clientInfo(req, proto);
    if (tally !== undefined) noteClient(tally, req, client);
    const { host, target } = checked;
    const main = found === undefined ? findRoute(this.table, host, target) : found.main;
    if (main === undefined) {
      if (!answeredGrpc(req, 404, "")) reply(res, 404);
      return;
    }
    const plan = planFor(main, req, client, checked);
    if (plan?.kind === "verify") {
      // The body stays unread (paused) while the password is checked off the event loop.
      void plan.pending.then(verdict => {
        const next = plan.resume(verdict);
        if (res.destroyed || req.destroyed) {
          if (next.kind === "proxy") next.release?.();
          return;
        }
        this.serve({ req, res, proto, tally, client, checked, fields }, main, next);
      });
      return;
    }
    this.serve({ req, res, proto, tally, client, checked, fields }, main, plan);
  }

  /** Answers the plan's own answer, or proxies the request as the plan says. */
  private serve(exchange: NodeExchange, main: Route, plan: Plan | undefined): void {
    const { req, res, proto, tally, client, checked, fields } = exchange;
    const route = noteRoute(tally, main, plan);
    if (plan?.kind === "proxy" && plan.release !== undefined) res.once("close", plan.release);
    if (plan?.kind === "answer") {
      if (!answeredGrpc(req, plan.answer.status, plan.decision)) {
        answer(res, plan.answer, req.method === "HEAD");
      }
      return;
    }
    const routed = { req, res, main, route, plan, checked, client, proto, tally, fields };
    const auth = main.traffic?.auth;
    if (auth === undefined) {
      this.forward(routed, undefined);
      return;
    }
    // auth-url: the request (its body unread) waits for the auth server's verdict.
    void auth.authorize(nodeAuthInput(req, client, checked, fields)).then(verdict => {
      if (res.destroyed || res.headersSent) return;
      if (verdict.kind === "pass") {
        this.forward(routed, verdict);
        return;
      }
      tally?.routed(main, "main", verdict.decision);
      if (!answeredGrpc(req, verdict.answer.status, verdict.decision)) {
        answer(res, verdict.answer, req.method === "HEAD");
      }
    });
  }

  /** Sends the request upstream with the plan's edits, and a passing auth verdict's headers. */
  private forward(exchange: RoutedRequest, pass: AuthPass | undefined): void {
    const { req, res, main, route, plan, checked, client, proto, tally, fields } = exchange;
    const raw = dropsAuthorization(plan) ? withoutFlatHeaders([...fields], AUTHORIZATION) : fields;
    const headers = upstreamRequestHeaders(raw, client, checked.host, {
      chunked: checked.chunked,
      underscores: this.limits.underscoresInHeaders,
    });
    const upstream = route.policy.upstream;
    const context = {
      headers: withUpstreamEdits(headers, upstream),
      pools: this.pools,
      counters: this.counters,
      tally,
      tls: upstreamTlsFor(upstream, proto === "https"),
      // limit-rate is the location's, as in ingress-nginx: a canary's own is not read.
      bandwidth: main.policy.bandwidth,
      streamedBody: checked.chunked,
    };
    const planned = withPlan(context, plan, checked.target);
    if (pass !== undefined) {
      planned.headers = authorizedFlat(planned.headers, pass);
      planned.responseFor = status => withAuthCookies(planned.response, pass, status);
    }
    const stream = h2StreamOf(req);
    if (upstream?.grpc === true && stream !== undefined) {
      this.callGrpc(stream, route, planned);
      return;
    }
    // TE stays on its hop (HTTP/1.1 servers send the trailers they have without it).
    if (stream !== undefined && acceptsTrailers(req.headers.te)) planned.relayTrailers = true;
    new Exchange(req, res, route, planned).start();
  }

  /** backend-protocol GRPC/GRPCS, from an HTTP/2 client: the call goes over HTTP/2 (grpc/). */
  private callGrpc(stream: ServerHttp2Stream, route: Route, planned: ExchangeContext): void {
    const { authority, headers } = grpcCallHeaders(planned.headers);
    const endpoint =
      planned.sticky === undefined
        ? route.backend.pickBy(route.policy.balance, planned.hashKey ?? "")
        : planned.sticky.pick(undefined);
    if (endpoint !== undefined) planned.tally?.sent(endpoint.key);
    forwardGrpc(
      stream,
      { ":authority": authority },
      {
        sessions: this.grpcSessions,
        endpoint,
        tls: route.policy.upstream?.tls,
        path: planned.target,
        added: headers,
        connectTimeoutMs: route.policy.connectTimeoutMs,
        readTimeoutMs: route.policy.readTimeoutMs,
      },
    );
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, proto: string): void {
    this.counters.requests++;
    // Finished by forwardUpgrade when the client's connection closes.
    const tally = this.beginTally(req);
    const routed = this.routeUpgrade(req, proto, tally);
    if (typeof routed === "number") {
      replyOnSocket(socket, routed);
      tally?.finish(routed);
      return;
    }
    const verify = routed.plan?.kind === "verify" ? routed.plan : undefined;
    if (verify === undefined) {
      this.upgradeRouted(req, socket, { ...routed, head, proto, tally });
      return;
    }
    void verify.pending.then(verdict => {
      const plan = verify.resume(verdict);
      if (socket.destroyed) {
        if (plan.kind === "proxy") plan.release?.();
        tally?.finish(499);
        return;
      }
      this.upgradeRouted(req, socket, { ...routed, plan, head, proto, tally });
    });
  }

  /** Answers an upgrade the plan refuses (401 with its challenge), or asks auth-url, then forwards it. */
  private upgradeRouted(req: IncomingMessage, socket: Duplex, routed: RoutedUpgrade): void {
    const { main, plan, client, checked, head, proto, tally } = routed;
    if (refuseUpgrade(socket, routed)) return;
    const proxied = plan?.kind === "proxy" ? plan : undefined;
    // limit-connections: the tunnel holds its slot until the client's connection closes.
    if (proxied?.release !== undefined) socket.once("close", proxied.release);
    const route = noteRoute(tally, main, proxied);
    const auth = main.traffic?.auth;
    if (auth === undefined) {
      this.tunnel(req, socket, { route, proxied, checked, client, head, proto, tally }, undefined);
      return;
    }
    // auth-url holds the upgrade too: a WebSocket is opened only for an authorized request.
    void auth.authorize(nodeAuthInput(req, client, checked, req.rawHeaders)).then(verdict => {
      if (socket.destroyed) return;
      if (verdict.kind === "pass") {
        this.tunnel(req, socket, { route, proxied, checked, client, head, proto, tally }, verdict);
        return;
      }
      tally?.routed(main, "main", verdict.decision);
      socket.end(ownResponseText(verdict.answer, true), "latin1");
      tally?.finish(verdict.answer.status);
    });
  }

  /** Opens the upgrade's tunnel to the backend, with a passing auth verdict's headers. */
  private tunnel(
    req: IncomingMessage,
    socket: Duplex,
    upgrading: Upgrading,
    pass: AuthPass | undefined,
  ): void {
    const { route, proxied, checked, client, head, proto, tally } = upgrading;
    const upgrade = req.headers.upgrade ?? "websocket";
    const raw = dropsAuthorization(proxied)
      ? withoutFlatHeaders(req.rawHeaders, AUTHORIZATION)
      : req.rawHeaders;
    const flat = upstreamRequestHeaders(raw, client, checked.host, {
      upgrade,
      underscores: this.limits.underscoresInHeaders,
    });
    const headers = withUpstreamEdits(flat, route.policy.upstream);
    forwardUpgrade(req, socket, route, {
      target: proxied?.target ?? checked.target,
      head,
      headers: pass === undefined ? headers : authorizedFlat(headers, pass),
      tls: upstreamTlsFor(route.policy.upstream, proto === "https"),
      ...endpointChoice(proxied),
      tally,
      track: tracked => {
        this.upgraded.add(tracked);
        tracked.once("close", () => this.upgraded.delete(tracked));
      },
    });
  }

  /**
   * An upgrade's route and plan, or the status that refuses it. Upgrades take the canary choice;
   * of the policy's own answers only refusals apply (a refused route, a client outside the source
   * ranges), not redirects, robots or CORS.
   */
  private routeUpgrade(req: IncomingMessage, proto: string, tally: ExchangeTally | undefined) {
    const checked = checkNodeRequest(req, this.limits);
    if (isRefusal(checked)) {
      this.refused(checked, clientIp(peerAddressOf(req.socket)));
      return checked.status;
    }
    const client = this.clientInfo(req, proto);
    if (tally !== undefined) noteClient(tally, req, client);
    const main = this.closing ? undefined : findRoute(this.table, checked.host, checked.target);
    if (main === undefined) return this.closing ? 503 : 404;
    const plan = planFor(main, req, client, checked);
    // A 401 is answered whole (its WWW-Authenticate challenge), the other refusals by status.
    const challenge = plan?.kind === "answer" && plan.decision === "unauthorized";
    if (plan?.kind === "answer" && plan.answer.status >= 400 && !challenge) {
      return plan.answer.status;
    }
    return { main, plan, client, checked };
  }
}

const PROXY_HEADER_REFUSAL = refusal("invalid-proxy-header");

/**
 * A request asking to upgrade to h2c only (RFC 7540 3.2, deprecated): Node's server has given up
 * the connection for an upgrade, so it is handed back to it with the head rewritten without the
 * upgrade (and the bytes after the head put back), and served as an ordinary HTTP/1.1 request.
 */
function ignoreH2cUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  nodeServes: (socket: Socket) => void,
): void {
  const requestLine = `${req.method ?? "GET"} ${req.url ?? "/"} HTTP/${req.httpVersion}`;
  const rewritten = Buffer.from(headWithoutH2cUpgrade(requestLine, req.rawHeaders), "latin1");
  socket.pause();
  socket.unshift(head.length === 0 ? rewritten : Buffer.concat([rewritten, head]));
  nodeServes(socket);
  socket.resume();
}

/** The HTTP/2 stream under a request that came through Node's compatibility layer; else undefined. */
function h2StreamOf(req: IncomingMessage): ServerHttp2Stream | undefined {
  return (req as unknown as { stream?: ServerHttp2Stream }).stream;
}

/**
 * A gRPC call over HTTP/2 that the gateway answers itself gets its answer as a gRPC status in a
 * trailers-only response (a client reads grpc-status, not the HTTP status); false for any other
 * request, which gets the plain answer.
 */
function answeredGrpc(req: IncomingMessage, status: number, decision: string): boolean {
  const stream = h2StreamOf(req);
  if (stream === undefined || !isGrpcRequest(req.headers["content-type"])) return false;
  if (stream.headersSent || stream.destroyed) return true;
  const reason = decision === "" ? (STATUS_CODES[status] ?? "refused") : decision;
  stream.respond(trailersOnly(grpcCodeFor(status, decision), `${status} ${reason}`), {
    endStream: true,
  });
  return true;
}

const AUTHORIZATION: ReadonlySet<string> = new Set(["authorization"]);

/** Basic auth passed on the route: the credentials stay here (ingress-nginx sends Authorization ""). */
function dropsAuthorization(plan: Plan | undefined): boolean {
  return plan?.kind === "proxy" && plan.dropAuthorization === true;
}

/** Answers an upgrade its plan refuses (a 401 with its challenge); false when it goes on. */
function refuseUpgrade(socket: Duplex, { main, plan, tally }: RoutedUpgrade): boolean {
  if (plan?.kind !== "answer" || plan.answer.status < 400) return false;
  noteRoute(tally, main, plan);
  socket.end(ownResponseText(plan.answer, true), "latin1");
  tally?.finish(plan.answer.status);
  return true;
}

/** A request on Node's path, while its plan is decided. */
interface NodeExchange {
  req: IncomingMessage;
  /** The client's fields as HTTP/1.1 fields (HTTP/2's without pseudo-headers). */
  fields: readonly string[];
  res: ServerResponse;
  proto: string;
  tally: ExchangeTally | undefined;
  client: RequestClient;
  checked: CheckedRequest;
}

/** An upgrade routed, with its plan. */
interface RoutedUpgrade {
  main: Route;
  plan: Plan | undefined;
  client: RequestClient;
  checked: CheckedRequest;
  head: Buffer;
  proto: string;
  tally: ExchangeTally | undefined;
}

/** A routed request on Node's path, between its plan and its exchange. */
interface RoutedRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly main: Route;
  readonly route: Route;
  readonly fields: readonly string[];
  readonly plan: Plan | undefined;
  readonly checked: CheckedRequest;
  readonly client: RequestClient;
  readonly proto: string;
  readonly tally: ExchangeTally | undefined;
}

/** An upgrade between its route and its tunnel. */
interface Upgrading {
  readonly route: Route;
  readonly proxied: ProxyPlan | undefined;
  readonly checked: CheckedRequest;
  readonly client: RequestClient;
  readonly head: Buffer;
  readonly proto: string;
  readonly tally: ExchangeTally | undefined;
}

/** What the auth step reads of a request on Node's path. */
function nodeAuthInput(
  req: IncomingMessage,
  client: RequestClient,
  checked: CheckedRequest,
  fields: readonly string[],
): AuthInput {
  const facts = new NodeHeadersFacts(
    req.method ?? "GET",
    checked.target,
    req.headers,
    client.proto === "https",
  );
  facts.routedHost = checked.host;
  facts.client = client.address;
  return {
    facts,
    headers: pairsOfRaw(fields),
    clientIp: formatIp(client.address),
    requestId: client.requestId,
  };
}

/** A request's head as the front door checked it, whatever the protocol. */
interface CheckedHead {
  proto: string;
  checked: CheckedRequest | Refusal;
  /** The client's fields as HTTP/1.1 fields (Node's raw list; HTTP/2's without pseudo-headers). */
  fields: readonly string[];
  /** The route the fast or h2 raw path already found (route-lookups.ts); undefined: look it up. */
  found?: { main: Route | undefined };
}

/** The client as the headers and the policy see it. */
interface RequestClient extends ClientInfo {
  readonly address: Address;
}

/** The request id for the tally and, with the access log on, who asked. */
function noteClient(tally: ExchangeTally, req: IncomingMessage, client: RequestClient): void {
  describeClient(tally, client, req.headers["user-agent"]);
}

/** The tally's request id, and with the access log on, who asked. */
function describeClient(
  tally: ExchangeTally,
  client: RequestClient,
  userAgent: string | undefined,
): void {
  tally.requestId = client.requestId;
  if (!tally.logging) return;
  tally.describe({
    client: client.ip,
    peer: client.peer ?? client.ip,
    userAgent: userAgent ?? "",
    scheme: client.proto,
  });
}

/** Node's value of a header that may come as several lines (joined with ", "). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The pool keys a route's requests use: its endpoints', with its TLS identity when it has one. */
function addPoolKeys(live: Set<string>, route: Route): void {
  const tls = route.policy.upstream?.tls;
  for (const target of [route, ...route.canaries]) {
    for (const endpoint of target.backend.endpoints) {
      live.add(endpoint.key);
      if (tls !== undefined) live.add(poolKey(endpoint.key, tls));
    }
  }
}

/** The gateway's own answer (preflight, robots, redirect) on Node's response. */
function answer(res: ServerResponse, own: OwnAnswer, bodyless: boolean): void {
  res.writeHead(own.status, ownAnswerHeaders(own, false).flat());
  res.end(bodyless ? undefined : own.body);
}

/** An h2 stream on the raw-pool path, while its plan is followed. */
interface H2Request {
  stream: ServerHttp2Stream;
  headers: IncomingHttpHeaders;
  /** Its fields as HTTP/1.1 ones (http1FieldsOf). */
  fields: string[];
  method: string;
  main: Route;
  checked: CheckedRequest;
  client: RequestClient;
  tally: ExchangeTally | undefined;
}

/** The traffic policy's plan for a request; undefined for a route without policy. */
function planFor(
  main: Route,
  asked: { method?: string | undefined; headers: IncomingHttpHeaders },
  client: RequestClient,
  checked: CheckedRequest,
): Plan | undefined {
  if (main.traffic === undefined) return undefined;
  const https = client.proto === "https";
  const facts = new NodeHeadersFacts(asked.method ?? "GET", checked.target, asked.headers, https);
  facts.routedHost = checked.host;
  facts.client = client.address;
  return planRequest(main, main.traffic, facts);
}

/** Node's parser errors as refusals: a head too large is 431 (as on the fast path), the rest 400. */
function nodeRefusal(code: string | undefined): Refusal {
  if (code === "HPE_HEADER_OVERFLOW") return refusal("head-too-large");
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return refusal("head-timeout");
  return refusal("invalid-field");
}

/** Tells the tally which backend serves and why; returns that route. */
function noteRoute(tally: ExchangeTally | undefined, main: Route, plan: Plan | undefined): Route {
  if (plan === undefined || plan.kind === "verify") {
    tally?.routed(main, "main", "");
    return main;
  }
  if (plan.kind === "answer") {
    tally?.routed(main, "main", plan.decision);
    return main;
  }
  tally?.routed(plan.route, plan.variant, plan.decision);
  return plan.route;
}

/** How the plan has the endpoint chosen: upstream-hash-by's key, affinity's sticky choice. */
function endpointChoice(plan: ProxyPlan | undefined) {
  return { hashKey: plan?.hashKey ?? "", sticky: plan?.sticky };
}

/** The headers with the route's upstream-vhost and x-forwarded-prefix applied. */
function withUpstreamEdits(headers: string[], upstream: UpstreamPolicy | undefined): string[] {
  const edits = upstream?.requestEdits;
  return edits === undefined ? headers : editFlatHeaders(headers, edits);
}

/** The exchange's headers, target and response edits, with the plan's edits when there is one. */
function withPlan(
  base: Pick<ExchangeContext, "headers" | "pools" | "counters" | "tally" | "tls" | "streamedBody">,
  plan: Plan | undefined,
  target: string,
): ExchangeContext {
  if (plan?.kind !== "proxy") return { ...base, target, response: undefined };
  return {
    ...base,
    headers: hasEdits(plan.request) ? editFlatHeaders(base.headers, plan.request) : base.headers,
    target: plan.target,
    response: hasEdits(plan.response) ? plan.response : undefined,
    errorPages: plan.errorPages,
    hashKey: plan.hashKey,
    sticky: plan.sticky,
  };
}
