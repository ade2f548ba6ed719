// The data plane inside one process: the HTTP and HTTPS listeners, the current routing table and
// certificates (one reference each, swapped by apply), the upstream pools, and a graceful close.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { compileRoutes } from "../routing/compile";
import { findRoute, forEachRoute, type RouteTable } from "../routing/table";
import { compileTls } from "../tls/compile";
import type { PemPair } from "../tls/default-certificate";
import { chooseCertificatePerClient } from "../tls/listener";
import { CertificateStore } from "../tls/store";
import type { AppliedView, GatewayView } from "../view";
import { Exchange, type ProxyCounters } from "./forward";
import { clientIp, upstreamRequestHeaders, type ClientInfo } from "./headers";
import { UpstreamPools } from "./pools";
import { reply, replyOnSocket } from "./replies";
import { forwardUpgrade } from "./upgrade";
import { ClientConnection, type FastContext } from "./fast/connection";
import { UpstreamPool } from "./fast/upstream";

export interface EngineOptions {
  httpPort: number;
  httpsPort?: number;
  host: string;
  /** The certificates for unknown server names (see tls/default-certificate.ts). */
  defaultCertificates: PemPair[];
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
const HEADERS_TIMEOUT_MS = 60_000;

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function tune(server: Server): void {
  server.keepAliveTimeout = CLIENT_KEEPALIVE_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  // Uploads and downloads may stream for as long as they make progress.
  server.requestTimeout = 0;
}

export class Engine {
  readonly counters: ProxyCounters = { requests: 0, retries: 0, upstreamErrors: 0, timeouts: 0 };
  private table: RouteTable = EMPTY_TABLE;
  private problems: string[] = [];
  private readonly pools = new UpstreamPools();
  private readonly certificates: CertificateStore;
  private readonly servers: Server[] = [];
  private readonly upgraded = new Set<Duplex>();
  private readonly fastPool = new UpstreamPool();
  private readonly fastConnections = new Set<ClientConnection>();
  closing = false;
  httpPort = 0;
  httpsPort: number | undefined = undefined;

  private constructor(defaultCertificates: PemPair[]) {
    this.certificates = new CertificateStore(defaultCertificates);
  }

  static async start(options: EngineOptions): Promise<Engine> {
    const engine = new Engine(options.defaultCertificates);
    const http = createServer();
    engine.attach(http, "http");
    engine.httpPort = await listen(http, options.httpPort, options.host);
    if (options.httpsPort !== undefined) {
      const https = createHttpsServer();
      chooseCertificatePerClient(https, engine.certificates);
      engine.attach(https, "https");
      engine.httpsPort = await listen(https, options.httpsPort, options.host);
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
    const routes = compileRoutes(view);
    const tls = compileTls(view, now);
    this.certificates.swap(tls.table);
    this.table = routes.table;
    const live = new Set<string>();
    forEachRoute(routes.table, route => {
      for (const endpoint of route.backend.endpoints) live.add(endpoint.key);
    });
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
    await closed;
    this.fastPool.closeIdle();
    this.pools.destroy();
  }

  private attach(server: Server, proto: "http" | "https"): void {
    tune(server);
    this.installFastPath(server, proto);
    this.servers.push(server);
    // The listener's port, known once listening; read per request from the socket.
    server.on("request", (req: IncomingMessage, res: ServerResponse) =>
      this.onRequest(req, res, proto),
    );
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket, head, proto),
    );
    server.on("clientError", (_error: Error, socket: Duplex) => {
      if (socket.writable) replyOnSocket(socket, 400);
      else socket.destroy();
    });
  }

  /**
   * Connections start on the fast path (fast/connection.ts); what it does not handle goes to the
   * Node HTTP server's own connection listener, and from there to onRequest/onUpgrade.
   */
  private installFastPath(server: Server, proto: "http" | "https"): void {
    const event = proto === "http" ? "connection" : "secureConnection";
    const nodeListener = server.listeners(event)[0] as (socket: Socket) => void;
    server.removeAllListeners(event);
    const context: FastContext = {
      table: () => this.table,
      pool: this.fastPool,
      counters: this.counters,
      isClosing: () => this.closing,
      fallback: socket => nodeListener.call(server, socket),
      forget: connection => this.fastConnections.delete(connection),
    };
    server.on(event, (socket: Socket) => {
      socket.setNoDelay(true);
      this.fastConnections.add(new ClientConnection(socket, context, proto));
    });
  }

  private clientInfo(req: IncomingMessage, proto: string): ClientInfo {
    const socket = req.socket;
    return { ip: clientIp(socket.remoteAddress), proto, port: String(socket.localPort ?? "") };
  }

  private onRequest(req: IncomingMessage, res: ServerResponse, proto: string): void {
    this.counters.requests++;
    if (this.closing) res.shouldKeepAlive = false;
    const host = req.headers.host;
    const route = findRoute(this.table, host, req.url ?? "/");
    if (route === undefined) {
      reply(res, 404);
      return;
    }
    const headers = upstreamRequestHeaders(req.rawHeaders, this.clientInfo(req, proto), host);
    new Exchange(req, res, route, { headers, pools: this.pools, counters: this.counters }).start();
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, proto: string): void {
    this.counters.requests++;
    const host = req.headers.host;
    const route = this.closing ? undefined : findRoute(this.table, host, req.url ?? "/");
    if (route === undefined) {
      replyOnSocket(socket, this.closing ? 503 : 404);
      return;
    }
    const upgrade = req.headers.upgrade ?? "websocket";
    const headers = upstreamRequestHeaders(
      req.rawHeaders,
      this.clientInfo(req, proto),
      host,
      upgrade,
    );
    forwardUpgrade(req, socket, route, {
      head,
      headers,
      track: tracked => {
        this.upgraded.add(tracked);
        tracked.once("close", () => this.upgraded.delete(tracked));
      },
    });
  }
}
