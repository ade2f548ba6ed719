// gRPC calls through the forwarder with real peers: @grpc/grpc-js as the client and as the
// backend, an HTTP/2 server of Node's in between handing each stream to forwardGrpc. Messages are
// raw bytes (no protobuf needed to carry them); every kind of call, metadata and trailers, the
// gateway's own statuses, deadlines, cancellation and a backend that dies mid-stream.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  connect,
  createServer,
  type ClientHttp2Session,
  type Http2Server,
  type IncomingHttpHeaders,
} from "node:http2";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { closedPort } from "../testkit";
import { forwardGrpc } from "./forward";
import { GrpcSessions } from "./sessions";
import { GrpcCode } from "./status";

const raw = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/test.Echo/${name}`,
  requestStream,
  responseStream,
  requestSerialize: raw.serialize,
  requestDeserialize: raw.deserialize,
  responseSerialize: raw.serialize,
  responseDeserialize: raw.deserialize,
});
const SERVICE = {
  Unary: method("Unary", false, false),
  ServerStream: method("ServerStream", false, true),
  ClientStream: method("ClientStream", true, false),
  Bidi: method("Bidi", true, true),
  Silent: method("Silent", false, false),
  Flood: method("Flood", false, true),
} as const;
type Service = typeof SERVICE;
const EchoClient = grpc.makeGenericClientConstructor(SERVICE, "Echo");
type Client = InstanceType<typeof EchoClient> & {
  [K in keyof Service]: (...args: unknown[]) => unknown;
};

interface Backend {
  port: number;
  server: grpc.Server;
  /** Cancellations seen by the backend, by method. */
  cancelled: string[];
  /** Messages Flood had written when its stream stopped taking more (write() false). */
  floodBuffered: number[];
}

async function startBackend(): Promise<Backend> {
  const server = new grpc.Server();
  const cancelled: string[] = [];
  const floodBuffered: number[] = [];
  const trailing = () => {
    const md = new grpc.Metadata();
    md.set("x-trace-bin", Buffer.from([0, 1, 2, 255]));
    md.set("x-served-by", "backend");
    return md;
  };
  server.addService(SERVICE, {
    Unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      const who = call.metadata.get("x-who")[0] ?? "";
      if (call.request.toString() === "fail") {
        done({ code: grpc.status.NOT_FOUND, details: "no such thing: é" }, null, trailing());
        return;
      }
      done(null, Buffer.concat([Buffer.from(`${String(who)}:`), call.request]), trailing());
    },
    ServerStream: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      const n = Number(call.request.toString());
      call.on("cancelled", () => cancelled.push("ServerStream"));
      let i = 0;
      const next = () => {
        if (call.cancelled) return;
        if (i === n) {
          call.end(trailing());
          return;
        }
        call.write(Buffer.from(`m${i++}`));
        setTimeout(next, n > 10 ? 0 : 20);
      };
      next();
    },
    ClientStream: (
      call: grpc.ServerReadableStream<Buffer, Buffer>,
      done: grpc.sendUnaryData<Buffer>,
    ) => {
      let total = 0;
      call.on("data", (m: Buffer) => (total += m.length));
      call.on("end", () => done(null, Buffer.from(String(total))));
    },
    Bidi: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on("data", (m: Buffer) => call.write(Buffer.from(m.toString().toUpperCase())));
      call.on("end", () => call.end(trailing()));
    },
    Silent: (call: grpc.ServerUnaryCall<Buffer, Buffer>) => {
      call.on("cancelled", () => cancelled.push("Silent"));
    },
    Flood: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      const chunk = Buffer.alloc(64 * 1024, 7);
      let written = 0;
      while (written < 2000 && call.write(chunk)) written++;
      floodBuffered.push(written);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { port, server, cancelled, floodBuffered };
}

/** The gateway stand-in: an h2c server whose streams all go to `port` (or nowhere). */
async function startFront(sessions: GrpcSessions, port: () => number | undefined) {
  const server: Http2Server = createServer();
  server.on("stream", (stream, headers: IncomingHttpHeaders) => {
    const p = port();
    forwardGrpc(stream, headers, {
      sessions,
      endpoint:
        p === undefined ? undefined : { address: "127.0.0.1", port: p, key: `127.0.0.1:${p}` },
      tls: undefined,
      path: headers[":path"]!,
      added: { "x-forwarded-for": "127.0.0.1" },
      connectTimeoutMs: 2000,
      readTimeoutMs: 60_000,
    });
  });
  await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function unary(client: Client, name: keyof Service, body: string, md = new grpc.Metadata()) {
  type Outcome = { error: grpc.ServiceError | null; reply?: Buffer; trailers?: grpc.Metadata };
  return new Promise<Outcome>(resolve => {
    // The callback comes first, the status (with the trailers) right after it.
    let answer: Omit<Outcome, "trailers"> | undefined;
    const call = (client[name] as (...a: unknown[]) => grpc.ClientUnaryCall)(
      Buffer.from(body),
      md,
      (error: grpc.ServiceError | null, reply?: Buffer) => (answer = { error, reply }),
    );
    call.on("status", (s: grpc.StatusObject) =>
      setImmediate(() => resolve({ error: null, ...answer, trailers: s.metadata })),
    );
  });
}

/** A raw HTTP/2 call, for what grpc-js would decide by itself (its own deadline). */
function rawCall(port: number, headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  const session: ClientHttp2Session = connect(`http://127.0.0.1:${port}`);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": "/test.Echo/Silent",
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    stream.on("response", h => resolve(h));
    stream.on("error", reject);
    // One empty message: 5 bytes of gRPC framing.
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  }).finally(() => session.close()) as Promise<IncomingHttpHeaders>;
}

describe("gRPC through the forwarder (grpc-js client and backend)", () => {
  let backend: Backend;
  let sessions: GrpcSessions;
  let front: { server: Http2Server; port: number };
  let client: Client;
  let target: number | undefined;

  before(async () => {
    backend = await startBackend();
    sessions = new GrpcSessions();
    target = backend.port;
    front = await startFront(sessions, () => target);
    client = new EchoClient(`127.0.0.1:${front.port}`, grpc.credentials.createInsecure()) as Client;
  });
  after(async () => {
    client.close();
    sessions.closeAll();
    backend.server.forceShutdown();
    await new Promise(resolve => front.server.close(resolve));
  });

  it("passes a unary call with metadata both ways and binary trailers", async () => {
    const md = new grpc.Metadata();
    md.set("x-who", "alice");
    const { error, reply, trailers } = await unary(client, "Unary", "hello", md);
    assert.equal(error, null);
    assert.equal(reply?.toString(), "alice:hello");
    assert.deepEqual(trailers?.get("x-trace-bin"), [Buffer.from([0, 1, 2, 255])]);
    assert.deepEqual(trailers?.get("x-served-by"), ["backend"]);
  });

  it("passes the backend's error status and its UTF-8 message", async () => {
    const { error } = await unary(client, "Unary", "fail");
    assert.equal(error?.code, grpc.status.NOT_FOUND);
    assert.equal(error?.details, "no such thing: é");
  });

  it("streams from the server, in order, with trailers at the end", async () => {
    const call = client.ServerStream(Buffer.from("50")) as grpc.ClientReadableStream<Buffer>;
    const got: string[] = [];
    call.on("data", (m: Buffer) => got.push(m.toString()));
    const status = await new Promise<grpc.StatusObject>(resolve => call.on("status", resolve));
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(
      got,
      Array.from({ length: 50 }, (_, i) => `m${i}`),
    );
    assert.deepEqual(status.metadata.get("x-served-by"), ["backend"]);
  });

  it("streams from the client, large messages included (4 × 1 MiB)", async () => {
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const call = client.ClientStream((error: grpc.ServiceError | null, r?: Buffer) =>
        error ? reject(error) : resolve(r!),
      ) as grpc.ClientWritableStream<Buffer>;
      for (let i = 0; i < 4; i++) call.write(Buffer.alloc(1024 * 1024, i));
      call.end();
    });
    assert.equal(reply.toString(), String(4 * 1024 * 1024));
  });

  it("streams both ways at once", async () => {
    const call = client.Bidi() as grpc.ClientDuplexStream<Buffer, Buffer>;
    const got: string[] = [];
    const ended = new Promise<grpc.StatusObject>(resolve => call.on("status", resolve));
    call.on("data", (m: Buffer) => {
      got.push(m.toString());
      if (got.length < 3) call.write(Buffer.from(`ping${got.length}`));
      else call.end();
    });
    call.write(Buffer.from("ping0"));
    assert.equal((await ended).code, grpc.status.OK);
    assert.deepEqual(got, ["PING0", "PING1", "PING2"]);
  });

  it("cancels the backend's call when the client cancels", async () => {
    const call = client.ServerStream(Buffer.from("5")) as grpc.ClientReadableStream<Buffer>;
    call.on("error", () => undefined); // the cancellation, also reported as the status
    const status = new Promise<grpc.StatusObject>(resolve => call.on("status", resolve));
    await new Promise(resolve => call.once("data", resolve));
    call.cancel();
    assert.equal((await status).code, grpc.status.CANCELLED);
    await waitFor(() => backend.cancelled.includes("ServerStream"));
  });

  it("answers DEADLINE_EXCEEDED itself when grpc-timeout passes, and cancels the backend's call", async () => {
    const headers = await rawCall(front.port, { "grpc-timeout": "150m" });
    assert.equal(headers[":status"], 200);
    assert.equal(headers["grpc-status"], String(GrpcCode.DEADLINE_EXCEEDED));
    assert.equal(headers["grpc-message"], "deadline exceeded at the gateway");
    await waitFor(() => backend.cancelled.includes("Silent"));
  });

  it("answers UNAVAILABLE when the route has no endpoint, and when the endpoint refuses", async () => {
    target = undefined;
    try {
      const none = await unary(client, "Unary", "x");
      assert.equal(none.error?.code, grpc.status.UNAVAILABLE);
      assert.equal(none.error?.details, "no ready endpoint for this route");
      target = await closedPort();
      const refused = await unary(client, "Unary", "x");
      assert.equal(refused.error?.code, grpc.status.UNAVAILABLE);
      assert.match(refused.error?.details ?? "", /^backend: .*ECONNREFUSED/);
    } finally {
      target = backend.port;
    }
  });

  it("holds the backend back when the client does not read: flow control end to end", async () => {
    const session = connect(`http://127.0.0.1:${front.port}`);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/test.Echo/Flood",
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
      stream.pause(); // never read
      await waitFor(() => backend.floodBuffered.length > 0);
      // 2000 messages of 64 KiB (125 MiB) were offered; windows and stream buffers hold a few.
      assert.ok(backend.floodBuffered[0]! < 100, `the backend wrote ${backend.floodBuffered[0]}`);
      stream.close();
    } finally {
      session.destroy();
    }
  });

  it("ends a call whose backend dies mid-stream with UNAVAILABLE, after what it had sent", async () => {
    const dying = await startBackend();
    target = dying.port;
    try {
      const call = client.ServerStream(Buffer.from("10")) as grpc.ClientReadableStream<Buffer>;
      const got: string[] = [];
      call.on("error", () => undefined); // reported as the status
      const status = new Promise<grpc.StatusObject>(resolve => call.on("status", resolve));
      call.on("data", (m: Buffer) => {
        got.push(m.toString());
        if (got.length === 3) dying.server.forceShutdown();
      });
      const { code } = await status;
      assert.equal(code, grpc.status.UNAVAILABLE);
      assert.deepEqual(got.slice(0, 3), ["m0", "m1", "m2"]);
    } finally {
      target = backend.port;
    }
  });

  it("multiplexes calls over one connection per endpoint", async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => unary(client, "Unary", String(i))));
    const endpoint = { address: "127.0.0.1", port: backend.port, key: `127.0.0.1:${backend.port}` };
    assert.equal(sessions.count(endpoint), 1);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}
