// Clients for the HTTP/2 tests: Node's http2 client (an ordinary one, and one that reaches the
// session for the attacks), HTTPS/1.1 for differential answers, and raw TLS for hand-made frames.
import {
  connect as connectH2,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
} from "node:http2";
import { request as requestHttps } from "node:https";
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls, type TLSSocket } from "node:tls";

export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A session to the gateway's HTTPS port with SNI `servername` (certificates not checked). */
export function openSession(
  port: number,
  servername: string,
  settings: Record<string, number | boolean> = {},
): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connectH2(`https://127.0.0.1:${port}`, {
      servername,
      rejectUnauthorized: false,
      settings,
    });
    // Ready once the server's SETTINGS arrived (its limits are known).
    session.once("remoteSettings", () => {
      session.off("error", reject);
      resolve(session);
    });
    session.once("error", reject);
  });
}

export interface H2AskOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** ":authority" (default: the host); "" sends none. */
  authority?: string;
}

/** One request on `session`; the answer in full. */
export function askOn(
  session: ClientHttp2Session,
  host: string,
  path: string,
  options: H2AskOptions = {},
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const authority = options.authority ?? host;
    const head: Record<string, string | string[]> = {
      ":method": options.method ?? "GET",
      ":path": path,
      ...(authority === "" ? {} : { ":authority": authority }),
      ...options.headers,
    };
    const stream = session.request(head, { endStream: options.body === undefined });
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", h => (headers = h));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () =>
      resolve({
        status: Number(headers[":status"]),
        headers,
        body: Buffer.concat(chunks).toString(),
      }),
    );
    stream.on("error", reject);
    if (options.body !== undefined) stream.end(options.body);
  });
}

/** One request on a session of its own (SNI = the host). */
export async function askH2(
  port: number,
  host: string,
  path: string,
  options: H2AskOptions = {},
): Promise<H2Answer> {
  const session = await openSession(port, host);
  try {
    return await askOn(session, host, path, options);
  } finally {
    session.close();
  }
}

/** The same request over HTTPS/1.1 (SNI = the host), for differential answers. */
export function askHttps(
  port: number,
  host: string,
  path: string,
  options: H2AskOptions = {},
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const req = requestHttps(
      {
        host: "127.0.0.1",
        port,
        path,
        servername: host,
        rejectUnauthorized: false,
        method: options.method ?? "GET",
        headers: { host, ...options.headers },
        agent: false,
      },
      res => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The protocol the listener picks for a client offering `offered` with SNI `servername`. */
export function negotiated(
  port: number,
  servername: string,
  offered: string[],
): Promise<string | false> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      { host: "127.0.0.1", port, servername, rejectUnauthorized: false, ALPNProtocols: offered },
      () => {
        resolve(socket.alpnProtocol ?? false);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

/** A raw TLS connection that negotiated h2, for frames written by hand. */
export function rawH2(port: number, servername: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      { host: "127.0.0.1", port, servername, rejectUnauthorized: false, ALPNProtocols: ["h2"] },
      () => resolve(socket),
    );
    socket.on("error", reject);
  });
}

/** A plain TCP connection to the HTTP port, for h2c frames written by hand. */
export function rawH2c(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, "127.0.0.1", () => resolve(socket));
    socket.on("error", reject);
  });
}

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** One frame: 9-byte header, then the payload. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const FLAG = { END_STREAM: 1, ACK: 1, END_HEADERS: 4 } as const;

/** An HPACK literal field without indexing, new name (RFC 7541 6.2.2), lengths < 127. */
export function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name, "latin1");
  const v = Buffer.from(value, "latin1");
  return Buffer.concat([Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v]);
}

/** HPACK for a GET of `path` at `authority` (static-table indexes for :method GET, :scheme https). */
export function getHeaderBlock(authority: string, path = "/"): Buffer {
  return Buffer.concat([
    Buffer.from([0x82, 0x87]),
    literal(":path", path),
    literal(":authority", authority),
  ]);
}

export interface FrameSeen {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** Reads the server's frames off a raw socket as they come; `closed` resolves when it closes. */
export function readFrames(socket: Socket): { frames: FrameSeen[]; closed: Promise<void> } {
  const frames: FrameSeen[] = [];
  let buffered = Buffer.alloc(0);
  socket.on("data", (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      frames.push({
        type: buffered.readUInt8(3),
        flags: buffered.readUInt8(4),
        streamId: buffered.readUInt32BE(5) & 0x7fffffff,
        payload: buffered.subarray(9, 9 + length),
      });
      buffered = buffered.subarray(9 + length);
    }
  });
  const closed = new Promise<void>(resolve => {
    socket.once("close", () => resolve());
    socket.on("error", () => undefined);
  });
  return { frames, closed };
}

/** The error code of the first GOAWAY among `frames`; undefined without one. */
export function goawayCode(frames: readonly FrameSeen[]): number | undefined {
  const goaway = frames.find(f => f.type === FRAME.GOAWAY);
  return goaway?.payload.readUInt32BE(4);
}
