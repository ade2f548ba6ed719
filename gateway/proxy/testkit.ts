// Helpers for the data plane's socket tests: real backends on loopback and a client that sets Host.
import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type Server,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, type AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { endpointSlice, ingress, view } from "../routing/testkit";
import type { GatewayView } from "../view";

export interface Backend {
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** A backend on `host` (loopback by default; the API server refuses it in EndpointSlices). */
export async function startBackend(handler: RequestListener, host = "127.0.0.1"): Promise<Backend> {
  const server = createServer(handler);
  await new Promise<void>(resolve => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A backend answering `name` and echoing what it got as JSON; `?status=N` answers N, `?ms=N` after N ms. */
export function namedBackend(name: string, host?: string): Promise<Backend> {
  return startBackend((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.stringify({
        name,
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const status = Number(/[?&]status=(\d{3})/.exec(req.url ?? "")?.[1] ?? 200);
      const delay = Number(/[?&]ms=(\d+)/.exec(req.url ?? "")?.[1] ?? 0);
      const answer = () => {
        res.writeHead(status, { "content-type": "application/json", "x-backend": name });
        res.end(body);
      };
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  }, host);
}

/** A port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const backend = await startBackend(() => undefined);
  await backend.close();
  return backend.port;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The local port of the client connection (tells whether a keep-alive connection was reused). */
  localPort: number | undefined;
}

export interface AskOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  agent?: Agent;
  /** The client's own address (any 127.0.0.0/8 address works on Linux's loopback). */
  localAddress?: string;
}

export function ask(
  port: number,
  host: string,
  path: string,
  options: AskOptions = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: options.method ?? "GET",
        headers: { host, ...options.headers },
        agent: options.agent ?? false,
        localAddress: options.localAddress,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
            localPort: res.socket?.localPort,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The backend name of a namedBackend answer. */
export function backendOf(answer: Answer): string | undefined {
  return answer.status === 200 ? (JSON.parse(answer.body) as { name: string }).name : undefined;
}

/**
 * An HTTPS backend echoing like namedBackend, plus the client certificate's subject CN it saw
 * ("" without one); `clientCa` makes it require a client certificate signed by that CA.
 */
export async function startHttpsBackend(
  name: string,
  tls: { cert: string; key: string; clientCa?: string },
  host = "127.0.0.1",
): Promise<Backend> {
  const server = createHttpsServer(
    {
      cert: tls.cert,
      key: tls.key,
      ca: tls.clientCa,
      requestCert: tls.clientCa !== undefined,
      rejectUnauthorized: tls.clientCa !== undefined,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name, headers: req.headers, client: peer?.subject?.CN ?? "" }));
    },
  );
  await new Promise<void>(resolve => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server: server as unknown as Server,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An EndpointSlice of `service` with one endpoint: a backend on loopback at `port`. */
export const loopback = (service: string, port: number) =>
  endpointSlice({
    service,
    name: `${service}-${port}`,
    ports: [{ port }],
    endpoints: [{ address: "127.0.0.1" }],
  });

/** A WebSocket-style upgrade sent by hand; the status line of the answer. */
export async function upgradeStatus(
  port: number,
  host: string,
  localAddress: string,
): Promise<string> {
  const head = await upgradeHead(port, host, { localAddress });
  return head.slice(0, head.indexOf("\r\n"));
}

/** A WebSocket-style upgrade sent by hand, with extra header lines; the head of the answer. */
export function upgradeHead(
  port: number,
  host: string,
  options: { localAddress?: string; lines?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: options.localAddress }, () => {
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `${options.lines ?? ""}Sec-WebSocket-Version: 13\r\n` +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
    });
    let text = "";
    socket.setEncoding("latin1");
    const done = () => {
      const end = text.indexOf("\r\n\r\n");
      resolve(end < 0 ? text : text.slice(0, end));
      socket.destroy();
    };
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.includes("\r\n\r\n")) done();
    });
    socket.on("end", done);
    socket.on("error", reject);
  });
}

export interface Received {
  body: Buffer;
  /** Bytes received by each moment (ms since the request was sent). */
  progress: { ms: number; bytes: number }[];
}

/** A GET whose body is timed as it arrives. */
export function fetchWithProgress(
  port: number,
  host: string,
  agent: Agent | false,
  headers: Record<string, string> = {},
): Promise<Received> {
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/", headers: { host, ...headers }, agent },
      res => {
        const chunks: Buffer[] = [];
        const progress: Received["progress"] = [];
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          chunks.push(chunk);
          progress.push({ ms: performance.now() - sentAt, bytes });
        });
        res.on("end", () => resolve({ body: Buffer.concat(chunks), progress }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * A view of one Ingress per name, each routing host `<name>.test` (path "/") to Service `service`,
 * whose one endpoint is 127.0.0.1:`port`; the value is the Ingress's annotations.
 */
export function hostsView(
  service: string,
  port: number,
  annotationsByName: Record<string, Record<string, string>>,
): GatewayView {
  const slice = endpointSlice({
    service,
    ports: [{ port }],
    endpoints: [{ address: "127.0.0.1" }],
  });
  const ingresses = Object.entries(annotationsByName).map(([name, annotations]) =>
    ingress({
      name,
      annotations,
      rules: [{ host: `${name}.test`, paths: [{ path: "/", service }] }],
    }),
  );
  return view(1, ingresses, [slice]);
}
