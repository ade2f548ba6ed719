// The HTTP/2 attacks, each sent by a real client (hand-made frames on a TLS socket, or Node's
// http2 client) against the gateway's HTTPS listener: what the connection may cost is bounded,
// and the connection is closed when a client only tries to make it cost more.
import assert from "node:assert/strict";
import { constants, type ClientHttp2Stream } from "node:http2";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { AddressInfo } from "node:net";
import type { ServerResponse } from "node:http";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "../../../test/harness/wait";
import { makeCertificate } from "../../../test/fixtures/certificates";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, loopbackSlice, view } from "../../routing/testkit";
import { DEFAULT_FRONT_DOOR } from "../request-rules";
import { startBackend, type Backend } from "../testkit";
import { H2Front, MAX_CONCURRENT_STREAMS } from "./front";
import {
  askH2,
  FLAG,
  FRAME,
  frame,
  getHeaderBlock,
  goawayCode,
  literal,
  openSession,
  PREFACE,
  rawH2,
  readFrames,
  type FrameSeen,
} from "./testkit";

/** Stalled bodies and unread answers are reset after this (the front door's body timeout). */
const BODY_TIMEOUT_MS = 500;

/** A raw h2 connection that sent its preface and SETTINGS (`settings`: id → value). */
async function rawClient(port: number, host: string, settings: [number, number][] = []) {
  const socket = await rawH2(port, host);
  const seen = readFrames(socket);
  const payload = Buffer.alloc(settings.length * 6);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, payload)]));
  return { socket, ...seen };
}

/** Writes `frames` as fast as the socket takes them; stops when the server has closed it. */
async function flood(
  socket: TLSSocket,
  count: number,
  make: (i: number) => Buffer,
): Promise<number> {
  let written = 0;
  for (let i = 0; i < count && !socket.destroyed && socket.writable; i++) {
    written++;
    if (!socket.write(make(i))) {
      await new Promise<void>(resolve => {
        const done = () => {
          socket.off("drain", done);
          socket.off("close", done);
          resolve();
        };
        socket.once("drain", done);
        socket.once("close", done);
      });
    }
  }
  return written;
}

const rstCode = (f: FrameSeen) => f.payload.readUInt32BE(0);

describe("data plane: HTTP/2 protections", () => {
  let plane: DataPlane;
  let hanging: Backend;
  let counting: Backend;
  let endless: Backend;
  let slow: Backend;
  /** Requests the counting backend was asked, and their paths. */
  let counted = 0;
  const countedPaths: string[] = [];
  /** The hanging backend's unanswered requests (answered at the end). */
  const held: ServerResponse[] = [];
  /** The endless backend's bytes handed to its socket, and whether its answer was cut. */
  const endlessState = { written: 0, closed: false, stalled: false };

  before(async () => {
    hanging = await startBackend((_req, res) => held.push(res));
    counting = await startBackend((req, res) => {
      counted++;
      countedPaths.push(req.url ?? "");
      setTimeout(() => res.end("counted"), 20);
    });
    endless = await startBackend((_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 120);
      res.on("close", () => (endlessState.closed = true));
      const pump = () => {
        while (!res.destroyed && endlessState.written < 64 * 1024 * 1024) {
          endlessState.written += chunk.length;
          if (!res.write(chunk)) {
            endlessState.stalled = true;
            res.once("drain", pump);
            return;
          }
        }
      };
      pump();
    });
    // Answers after three body timeouts: a stream only waiting for its upstream is not stalled.
    slow = await startBackend((_req, res) => {
      setTimeout(() => res.end("late"), 3 * BODY_TIMEOUT_MS);
    });
    plane = await startDataPlane({
      httpPort: 0,
      httpsPort: 0,
      host: "127.0.0.1",
      frontDoor: { ...DEFAULT_FRONT_DOOR, bodyTimeoutMs: BODY_TIMEOUT_MS },
    });
    const route = (host: string, service: string, port: number) => ({
      ingress: ingress({ name: service, rules: [{ host, paths: [{ path: "/", service }] }] }),
      slice: loopbackSlice(service, port),
    });
    const routes = [
      route("hang.test", "hanging", hanging.port),
      route("count.test", "counting", counting.port),
      route("endless.test", "endless", endless.port),
      route("slow.test", "slow", slow.port),
    ];
    await plane.apply(
      view(
        1,
        routes.map(r => r.ingress),
        routes.map(r => r.slice),
      ),
    );
  });
  after(async () => {
    for (const res of held) res.end();
    await plane.close({ drainMs: 200 });
    await Promise.all([hanging.close(), counting.close(), endless.close(), slow.close()]);
  });

  it("announces its limits explicitly in SETTINGS", async () => {
    const session = await openSession(plane.httpsPort!, "count.test");
    try {
      const settings = session.remoteSettings;
      assert.equal(settings.maxConcurrentStreams, 128);
      assert.equal(settings.maxHeaderListSize, DEFAULT_FRONT_DOOR.maxHeadBytes);
      assert.equal(settings.headerTableSize, 4096);
      assert.equal(settings.initialWindowSize, 65_535);
      assert.equal(settings.enablePush, false);
    } finally {
      session.close();
    }
  });

  it("max concurrent streams: streams past 128 open ones are refused (REFUSED_STREAM), never forwarded", async () => {
    const before = held.length;
    const client = await rawClient(plane.httpsPort!, "hang.test");
    const streams = MAX_CONCURRENT_STREAMS + 10;
    for (let i = 0; i < streams; i++) {
      const id = 1 + 2 * i;
      client.socket.write(
        frame(
          FRAME.HEADERS,
          FLAG.END_HEADERS | FLAG.END_STREAM,
          id,
          getHeaderBlock("hang.test", `/s${id}`),
        ),
      );
    }
    await waitUntil(
      "10 refused streams",
      () =>
        client.frames.filter(
          f => f.type === FRAME.RST_STREAM && rstCode(f) === constants.NGHTTP2_REFUSED_STREAM,
        ).length >= 10,
    );
    await waitUntil("128 held requests", () => held.length - before >= MAX_CONCURRENT_STREAMS);
    const refused = client.frames.filter(f => f.type === FRAME.RST_STREAM).map(f => f.streamId);
    assert.deepEqual(
      refused,
      Array.from({ length: 10 }, (_, i) => 1 + 2 * (MAX_CONCURRENT_STREAMS + i)),
    );
    assert.equal(held.length - before, MAX_CONCURRENT_STREAMS);
    client.socket.destroy();
  });

  it("rapid reset (CVE-2023-44487): a loop of open-and-cancel closes the connection (GOAWAY ENHANCE_YOUR_CALM) and reaches the upstream a bounded number of times", async () => {
    const refusedBefore = plane.status().counters.refused["h2-rapid-reset"] ?? 0;
    const countedBefore = counted;
    const client = await rawClient(plane.httpsPort!, "count.test");
    const written = await flood(client.socket, 5000, i => {
      const id = 1 + 2 * i;
      return Buffer.concat([
        frame(
          FRAME.HEADERS,
          FLAG.END_HEADERS | FLAG.END_STREAM,
          id,
          getHeaderBlock("count.test", "/r"),
        ),
        frame(FRAME.RST_STREAM, 0, id, Buffer.from([0, 0, 0, constants.NGHTTP2_CANCEL])),
      ]);
    });
    await client.closed;
    assert.equal(goawayCode(client.frames), constants.NGHTTP2_ENHANCE_YOUR_CALM);
    assert.ok(written < 5000, `the client wrote all of its ${written} pairs`);
    assert.ok(
      counted - countedBefore <= 2 * MAX_CONCURRENT_STREAMS + 1,
      `${counted - countedBefore} upstream requests`,
    );
    assert.equal(plane.status().counters.refused["h2-rapid-reset"], refusedBefore + 1);
  });

  it("a browser that cancels now and then keeps its connection", async () => {
    const session = await openSession(plane.httpsPort!, "count.test");
    try {
      for (let round = 0; round < 5; round++) {
        const cancelled = session.request({ ":path": "/cancelled", ":authority": "count.test" });
        cancelled.on("error", () => undefined);
        cancelled.close(constants.NGHTTP2_CANCEL);
        const answered = await new Promise<string>((resolve, reject) => {
          const stream = session.request({ ":path": "/kept", ":authority": "count.test" });
          let body = "";
          let status = "";
          stream.setEncoding("utf8");
          stream.on("response", h => (status = String(h[":status"])));
          stream.on("data", (chunk: string) => (body += chunk));
          stream.on("end", () => resolve(`${status} ${body} ${stream.rstCode ?? ""}`));
          stream.on("error", reject);
        });
        assert.equal(answered, "200 counted 0");
      }
      assert.equal(session.closed, false);
    } finally {
      session.close();
    }
  });

  it("CONTINUATION flood: endless empty CONTINUATION frames close the connection", async () => {
    const client = await rawClient(plane.httpsPort!, "count.test");
    client.socket.write(frame(FRAME.HEADERS, 0, 1, getHeaderBlock("count.test", "/c")));
    const written = await flood(client.socket, 200_000, () => frame(FRAME.CONTINUATION, 0, 1));
    await client.closed;
    assert.ok(written < 200_000, `all ${written} CONTINUATION frames were taken`);
  });

  it("CONTINUATION flood: a header list growing past SETTINGS_MAX_HEADER_LIST_SIZE is never forwarded", async () => {
    const client = await rawClient(plane.httpsPort!, "count.test");
    client.socket.write(frame(FRAME.HEADERS, 0, 1, getHeaderBlock("count.test", "/growing")));
    const field = literal("x-fill", "a".repeat(100));
    const written = await flood(client.socket, 20_000, () =>
      frame(FRAME.CONTINUATION, 0, 1, Buffer.concat(Array.from({ length: 100 }, () => field))),
    );
    await client.closed;
    assert.ok(written < 20_000, `all ${written} CONTINUATION frames were taken`);
    assert.ok(!countedPaths.includes("/growing"));
  });

  it("header list size: a complete header list over the limit is refused, never forwarded", async () => {
    const big = Array.from({ length: 5 }, () => "a".repeat(15_000));
    const session = await openSession(plane.httpsPort!, "count.test");
    session.on("error", () => undefined);
    const outcome = await new Promise<string>(resolve => {
      const stream: ClientHttp2Stream = session.request({
        ":path": "/big",
        ":authority": "count.test",
        ...Object.fromEntries(big.map((v, i) => [`x-big-${i}`, v])),
      });
      stream.on("response", h => resolve(`status ${h[":status"]}`));
      stream.on("close", () => resolve(`reset ${stream.rstCode}`));
      stream.on("error", () => undefined);
    });
    session.destroy();
    assert.notEqual(outcome, "status 200");
    assert.ok(!countedPaths.includes("/big"));
  });

  it("header list pairs: more fields than maxHeaderListPairs are refused, never forwarded", async () => {
    const session = await openSession(plane.httpsPort!, "count.test");
    session.on("error", () => undefined);
    const fields = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`x-f${i}`, "1"]));
    const outcome = await new Promise<string>(resolve => {
      const stream = session.request({ ":path": "/pairs", ":authority": "count.test", ...fields });
      stream.on("response", h => resolve(`status ${h[":status"]}`));
      stream.on("close", () => resolve(`reset ${stream.rstCode}`));
      stream.on("error", () => undefined);
    });
    session.destroy();
    assert.notEqual(outcome, "status 200");
    assert.ok(!countedPaths.includes("/pairs"));
  });

  it("HPACK: a dynamic table size update above the announced 4096 is a connection error", async () => {
    const client = await rawClient(plane.httpsPort!, "count.test");
    // 001xxxxx: dynamic table size update to 65536 (31 + 65505 as a varint).
    const update = Buffer.from([0x3f, 0xe1, 0xff, 0x03]);
    client.socket.write(
      frame(
        FRAME.HEADERS,
        FLAG.END_HEADERS | FLAG.END_STREAM,
        1,
        Buffer.concat([update, getHeaderBlock("count.test")]),
      ),
    );
    await client.closed;
    assert.equal(goawayCode(client.frames), constants.NGHTTP2_COMPRESSION_ERROR);
  });

  it("stream timeout: a request body that stalls is reset (CANCEL) after the body timeout", async () => {
    const client = await rawClient(plane.httpsPort!, "count.test");
    client.socket.write(
      frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, getHeaderBlock("count.test", "/slow")),
    );
    client.socket.write(frame(FRAME.DATA, 0, 1, Buffer.from("part of a body")));
    await waitUntil("the stream's reset", () =>
      client.frames.find(f => f.type === FRAME.RST_STREAM && f.streamId === 1),
    );
    const reset = client.frames.find(f => f.type === FRAME.RST_STREAM && f.streamId === 1)!;
    assert.equal(rstCode(reset), constants.NGHTTP2_CANCEL);
    client.socket.destroy();
  });

  it("stream timeout: a stream waiting longer than the body timeout for its upstream is not reset", async () => {
    const answer = await askH2(plane.httpsPort!, "slow.test", "/");
    assert.deepEqual([answer.status, answer.body], [200, "late"]);
  });

  it("a client that never reads: the upstream is held back by the flow-control window, then the stream is reset and the upstream cut", async () => {
    // A window of 0: the server may send no DATA at all until the client opens it, which it never does.
    const client = await rawClient(plane.httpsPort!, "endless.test", [[4, 0]]);
    client.socket.write(
      frame(
        FRAME.HEADERS,
        FLAG.END_HEADERS | FLAG.END_STREAM,
        1,
        getHeaderBlock("endless.test", "/big"),
      ),
    );
    await waitUntil(
      "the stream's reset",
      () => client.frames.find(f => f.type === FRAME.RST_STREAM && f.streamId === 1),
      30_000,
    );
    await waitUntil("the upstream answer cut", () => endlessState.closed);
    assert.equal(endlessState.stalled, true);
    // Socket buffers on both sides of the gateway and its stream's buffer: a few MB at most of 64.
    assert.ok(
      endlessState.written < 16 * 1024 * 1024,
      `the upstream wrote ${endlessState.written} bytes`,
    );
    assert.equal(client.frames.filter(f => f.type === FRAME.DATA).length, 0);
    client.socket.destroy();
  });
});

/** An H2Front alone behind a TLS server, with an idle time short enough to wait for. */
async function startFront(idleMs: number) {
  const certificate = makeCertificate({ key: "ecdsa", dnsNames: ["front.test"] });
  const front = new H2Front({
    limits: { maxHeadBytes: 65_536, bodyTimeoutMs: 60_000, idleMs },
    onRequest: (_req, res) => res.end("ok"),
    onAbuse: () => undefined,
  });
  const server = createTlsServer(
    { cert: certificate.certPem, key: certificate.keyPem, ALPNProtocols: ["h2"] },
    socket => front.accept(socket),
  );
  await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      front.destroy();
      server.close();
    },
  };
}

describe("HTTP/2 front: idle connections and control-frame floods", () => {
  it("closes a connection with no frame for the idle time (GOAWAY NO_ERROR, then the socket)", async () => {
    const front = await startFront(300);
    try {
      assert.equal((await askH2(front.port, "front.test", "/")).body, "ok");
      const client = await rawClient(front.port, "front.test");
      await client.closed;
      assert.equal(goawayCode(client.frames), constants.NGHTTP2_NO_ERROR);
    } finally {
      front.close();
    }
  });

  for (const [name, make] of [
    ["SETTINGS", () => frame(FRAME.SETTINGS, 0, 0)],
    ["PING", () => frame(FRAME.PING, 0, 0, Buffer.alloc(8))],
  ] as const) {
    it(`${name} flood: a client that sends ${name} frames and never reads the ACKs is disconnected`, async () => {
      const front = await startFront(1000);
      try {
        const client = await rawClient(front.port, "front.test");
        // The client reads nothing: every ACK the server owes stays queued on its side.
        client.socket.pause();
        const flooding = flood(client.socket, 1_000_000, make);
        await client.closed;
        const written = await flooding;
        assert.ok(written < 1_000_000, `all ${written} ${name} frames were taken`);
      } finally {
        front.close();
      }
    });
  }
});
