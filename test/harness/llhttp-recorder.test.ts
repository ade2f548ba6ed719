import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { LlhttpRecorder, readResponses, sendRaw } from "./llhttp-recorder";

/** Blocks the event loop, as a long garbage collection does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** A connection to the recorder from local port `localPort`: sends one request, waits for its close. */
async function requestFrom(recorder: LlhttpRecorder, localPort: number, path: string) {
  const socket: Socket = connect({
    port: recorder.port,
    host: "127.0.0.1",
    localAddress: "127.0.0.1",
    localPort,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  // The recorder closes first (Connection: close), so this side's port is free again at once.
  socket.on("data", () => undefined);
  await new Promise<void>(resolve => {
    socket.on("close", () => resolve());
    socket.write(`GET ${path} HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n`);
  });
}

describe("the llhttp recorder, when a client port comes again", () => {
  let recorder: LlhttpRecorder;
  before(async () => (recorder = await LlhttpRecorder.start()));
  after(() => recorder.close());

  it("never gives a connection the stream of an earlier one from the same port", async () => {
    // A port of its own for this test: the first free one the kernel gives a listener.
    const listener = createServer();
    await new Promise<void>(resolve => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as AddressInfo).port;
    await new Promise(resolve => listener.close(resolve));

    await requestFrom(recorder, port, "/first");
    const beforeSecond = recorder.accepted;
    // What a relay that has just connected from the reused port looks up, before the recorder
    // has seen its connection: not the first connection's requests.
    assert.equal(recorder.parsed(port, beforeSecond), undefined);
    assert.deepEqual(
      recorder.parsed(port, beforeSecond - 1)?.requests.map(r => r.target),
      ["/first"],
    );

    await requestFrom(recorder, port, "/second");
    assert.deepEqual(
      recorder.parsed(port, beforeSecond)?.requests.map(r => r.target),
      ["/second"],
    );
  });
});

describe("sendRaw, when the event loop stalls", () => {
  it("still sees an answer that came while the loop stalled past its quiet time", async () => {
    // The server (in this process, as the gateway is in the differential test) stalls the loop
    // for longer than the quiet time after it has read the request, then refuses it.
    const server = createServer(socket => {
      socket.once("data", () => {
        stall(80);
        socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      });
    });
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
    try {
      // Bytes that llhttp parses no request from: nothing is awaited but the quiet time.
      const client = await sendRaw(
        (server.address() as AddressInfo).port,
        Buffer.from("GET / HTTP/1.1\r\nhost: a\r\n"),
        0,
      );
      assert.deepEqual(
        readResponses(client.bytes).responses.map(r => r.status),
        [400],
      );
      assert.equal(client.closed, true);
    } finally {
      server.close();
    }
  });

  it("ends on a connection that stays open and quiet", async () => {
    const server = createServer(socket => {
      socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    });
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
    try {
      const client = await sendRaw(
        (server.address() as AddressInfo).port,
        Buffer.from("GET / HTTP/1.1\r\nhost: a\r\n\r\n"),
        1,
      );
      assert.equal(readResponses(client.bytes).responses.length, 1);
      assert.equal(client.closed, false);
    } finally {
      server.close();
    }
  });
});
