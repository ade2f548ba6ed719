// Node's own HTTP parser (llhttp, as http.createServer uses it by default: strict, not the
// insecure parser) as a recorder: every request it parses on a connection is kept (method, target,
// fields, body) and answered with a small response that says it came from here. Used twice by the
// front door's differential test: on the client's bytes directly (what a strict parser makes of
// them) and as the backend behind the gateway (what the gateway actually sent).
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";

export interface ParsedRequest {
  /** The order in which the recorder finished reading requests, over all its connections. */
  seq: number;
  method: string;
  target: string;
  httpVersion: string;
  /** Field lines as parsed: [name, value] in order, names as sent. */
  fields: [string, string][];
  body: Buffer;
}

/** What llhttp made of one connection's bytes. */
export interface ParsedStream {
  requests: ParsedRequest[];
  /** llhttp's error code when it refused part of the stream (it answers 400 and closes then). */
  error: string | undefined;
}

/** The header a recorder's answers carry, so an answer the gateway made itself can be told apart. */
export const FROM_BACKEND = "x-from-backend";

export class LlhttpRecorder {
  /** By the client's port; ports are reused, so each stream notes which connection it was. */
  private readonly streams = new Map<string, { ordinal: number; stream: ParsedStream }>();
  private seq = 0;
  /** Connections accepted so far: the ordinal of the last. */
  accepted = 0;
  readonly server: Server;
  port = 0;

  private constructor() {
    // Heads as large as the gateway lets through: Node's 16 KiB default would refuse them here.
    this.server = createServer({ maxHeaderSize: 1024 * 1024, requireHostHeader: false });
    this.server.maxHeadersCount = 0;
    this.server.on("connection", (socket: Socket) => {
      const stream = { requests: [], error: undefined };
      this.streams.set(keyOf(socket.remotePort), { ordinal: ++this.accepted, stream });
    });
    this.server.on("request", (req: IncomingMessage, res) => {
      const stream = this.streams.get(keyOf(req.socket.remotePort))?.stream;
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        stream?.requests.push({
          seq: this.seq++,
          method: req.method ?? "",
          target: req.url ?? "",
          httpVersion: req.httpVersion,
          fields: pairs(req.rawHeaders),
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { [FROM_BACKEND]: "1", "content-length": "2" });
        res.end("ok");
      });
    });
    this.server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
      const stream = this.streams.get(keyOf(socket.remotePort))?.stream;
      if (stream !== undefined) stream.error = error.code ?? error.message;
      socket.destroy();
    });
  }

  static async start(): Promise<LlhttpRecorder> {
    const recorder = new LlhttpRecorder();
    await new Promise<void>(resolve => recorder.server.listen(0, "127.0.0.1", resolve));
    recorder.port = (recorder.server.address() as AddressInfo).port;
    return recorder;
  }

  /**
   * What was parsed on the connection from local port `port` (made by this process) accepted
   * after the first `accepted` connections: an earlier connection from the same port is not it.
   */
  parsed(port: number | undefined, accepted: number): ParsedStream | undefined {
    const entry = this.streams.get(keyOf(port));
    return entry !== undefined && entry.ordinal > accepted ? entry.stream : undefined;
  }

  /** Feeds `bytes` to llhttp on a connection of its own and returns what it parsed. */
  async parse(bytes: Buffer): Promise<ParsedStream> {
    const before = this.accepted;
    const socket = connect(this.port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const port = socket.localPort;
    await new Promise<void>(resolve => {
      socket.on("data", () => undefined);
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
      socket.end(bytes);
    });
    return this.parsed(port, before) ?? { requests: [], error: "no connection" };
  }

  close(): Promise<void> {
    return new Promise(resolve => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

const keyOf = (port: number | undefined) => String(port);

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/**
 * A backend on raw TCP that records exactly the bytes it receives, each connection relayed to an
 * llhttp recorder that parses and answers them: what the gateway sent, and what a strict parser
 * made of it.
 */
export class RecordingBackend {
  /** The bytes of each upstream connection, in the order the connections came. */
  readonly received: Buffer[][] = [];
  private readonly relays: Socket[] = [];
  private readonly sockets: Socket[] = [];
  private readonly tcp = createTcpServer();
  port = 0;

  private constructor(private readonly recorder: LlhttpRecorder) {
    this.tcp.on("connection", (socket: Socket) => {
      this.sockets.push(socket);
      const chunks: Buffer[] = [];
      this.received.push(chunks);
      const before = recorder.accepted;
      const relay = connect(recorder.port, "127.0.0.1");
      this.relays.push(relay);
      // The recorder keys streams by port, and ports are reused: take this connection's stream,
      // one the recorder accepts from now on, never an earlier one from the same port.
      relay.once("connect", () => this.claim(relay.localPort, before));
      socket.on("data", (data: Buffer) => {
        chunks.push(data);
        relay.write(data);
      });
      relay.on("data", (data: Buffer) => socket.write(data));
      socket.on("end", () => relay.end());
      relay.on("end", () => socket.end());
      socket.on("error", () => relay.destroy());
      relay.on("error", () => socket.destroy());
      socket.on("close", () => relay.destroy());
    });
  }

  static async start(recorder: LlhttpRecorder): Promise<RecordingBackend> {
    const backend = new RecordingBackend(recorder);
    await new Promise<void>(resolve => backend.tcp.listen(0, "127.0.0.1", resolve));
    backend.port = (backend.tcp.address() as AddressInfo).port;
    return backend;
  }

  private readonly streams: ParsedStream[] = [];
  /** Upstream connections whose parse could not be found: a failure of this harness, named. */
  private readonly lost: string[] = [];

  private claim(port: number | undefined, before: number, tries = 0): void {
    const stream = this.recorder.parsed(port, before);
    if (stream !== undefined) this.streams.push(stream);
    else if (tries < 100) setImmediate(() => this.claim(port, before, tries + 1));
    else this.lost.push(`the recorder never showed the connection from port ${port}`);
  }

  /** Every request the backend's parser read, over all connections, in the order read. */
  requests(): ParsedRequest[] {
    return this.streams.flatMap(stream => stream.requests).sort((a, b) => a.seq - b.seq);
  }

  /** The backend parser's errors (a gateway that forwarded bytes a strict parser refuses). */
  errors(): string[] {
    return [...this.lost, ...this.streams.flatMap(stream => stream.error ?? [])];
  }

  close(): Promise<void> {
    // The gateway keeps idle upstream connections pooled: close them from this side.
    for (const socket of [...this.relays, ...this.sockets]) socket.destroy();
    return new Promise(resolve => this.tcp.close(() => resolve()));
  }
}

/** One HTTP/1.1 response as the client read it. */
export interface ClientResponse {
  status: number;
  fromBackend: boolean;
  headers: Map<string, string>;
}

/**
 * The responses in the bytes a client received (heads with Content-Length or no body, as the
 * gateway and the recorder answer); `rest` holds what did not parse as a response.
 */
export function readResponses(bytes: Buffer): { responses: ClientResponse[]; rest: string } {
  let text = bytes.toString("latin1");
  const responses: ClientResponse[] = [];
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
    if (end < 0 || match === null) break;
    const headers = new Map<string, string>();
    for (const line of text.slice(0, end).split("\r\n").slice(1)) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    const status = Number(match[1]);
    if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
      // The gateway's and the recorder's chunked answers are small: up to the last chunk.
      const last = text.indexOf("\r\n0\r\n\r\n", end);
      text = last < 0 ? "" : text.slice(last + 7);
    } else {
      const bodyless = status < 200 || status === 204;
      text = text.slice(end + 4 + (bodyless ? 0 : Number(headers.get("content-length") ?? 0)));
    }
    // 100 Continue is not an answer to a request of its own.
    if (status === 100) continue;
    responses.push({ status, fromBackend: headers.get(FROM_BACKEND) === "1", headers });
  }
  return { responses, rest: text };
}

/**
 * Sends `bytes` on one connection (not half-closed: a proxy may take a client's FIN for an abort,
 * as nginx does) and collects what comes back until the server closes, or until `answers`
 * responses have come and nothing more for `quietMs` of a running event loop, or `timeoutMs` in
 * all.
 */
export function sendRaw(
  port: number,
  bytes: Buffer,
  answers: number,
  { quietMs = 25, timeoutMs = 5000 } = {},
): Promise<{ bytes: Buffer; closed: boolean }> {
  return new Promise(resolve => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let quiet: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(quiet);
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    const settle = () => {
      clearTimeout(quiet);
      if (readResponses(Buffer.concat(chunks)).responses.length < answers) return;
      const armed = performance.now();
      quiet = setTimeout(() => {
        // Late by far: the loop was stalled (a long GC; the gateway runs in this process), and
        // an answer written meanwhile is read only on the loop's next turn. Quiet time counts
        // only while the loop could have seen the answer.
        if (performance.now() - armed > 2 * quietMs) settle();
        else finish(false);
      }, quietMs);
    };
    socket.on("data", (data: Buffer) => {
      chunks.push(data);
      settle();
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    socket.write(bytes, settle);
  });
}
