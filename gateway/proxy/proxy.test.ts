import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import type { GatewayView } from "../view";
import { makeCertificate } from "../../test/fixtures/certificates";
import { waitUntil } from "../../test/harness/wait";
import {
  ask,
  backendOf,
  closedPort,
  namedBackend,
  startBackend,
  type Backend,
  loopback,
} from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

describe("data plane: proxying over real sockets", () => {
  let plane: DataPlane;
  const backends: Backend[] = [];
  let a: Backend;
  let b: Backend;
  let slow: Backend;
  let version = 0;
  let refused: number;

  const baseView = (aPort: number): GatewayView =>
    view(
      ++version,
      [
        ingress({
          name: "main",
          rules: [
            {
              host: "app.test",
              paths: [
                { path: "/", service: "a" },
                { path: "/b", service: "b" },
              ],
            },
            { host: "retry.test", paths: [{ path: "/", service: "flaky" }] },
            { host: "empty.test", paths: [{ path: "/", service: "nothing" }] },
          ],
        }),
        ingress({
          name: "limits",
          annotations: { [`${P}proxy-body-size`]: "1k", [`${P}proxy-read-timeout`]: "1" },
          rules: [
            {
              host: "limits.test",
              paths: [
                { path: "/", service: "a" },
                { path: "/slow", service: "slow" },
              ],
            },
          ],
        }),
      ],
      [
        loopback("a", aPort),
        loopback("b", b.port),
        loopback("slow", slow.port),
        endpointSlice({
          service: "flaky",
          ports: [{ port: refused }],
          endpoints: [{ address: "127.0.0.1" }],
        }),
        endpointSlice({
          service: "flaky",
          name: "flaky-good",
          ports: [{ port: a.port }],
          endpoints: [{ address: "127.0.0.1" }],
        }),
      ],
    );

  before(async () => {
    a = await namedBackend("a");
    b = await namedBackend("b");
    slow = await startBackend(() => undefined); // never answers
    refused = await closedPort();
    backends.push(a, b, slow);
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      workers: 1,
      defaultCertificates: [],
    });
    await plane.apply(baseView(a.port));
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    for (const backend of backends) await backend.close();
  });

  it("routes by host and path, and answers 404 for no route", async () => {
    assert.equal(backendOf(await ask(plane.httpPort, "app.test", "/x")), "a");
    assert.equal(backendOf(await ask(plane.httpPort, "app.test:80", "/b/c?d=1")), "b");
    const missing = await ask(plane.httpPort, "nowhere.test", "/");
    assert.equal(missing.status, 404);
    assert.equal(missing.body, "404 Not Found\n");
  });

  it("sends X-Forwarded-* and X-Real-IP, appends to X-Forwarded-For, drops hop-by-hop headers", async () => {
    const answer = await ask(plane.httpPort, "app.test", "/h", {
      headers: {
        "x-forwarded-for": "203.0.113.7",
        "x-forwarded-proto": "https",
        "x-custom": "kept",
        connection: "keep-alive, x-secret",
        "x-secret": "dropped",
        "keep-alive": "timeout=5",
      },
    });
    const seen = (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
    assert.equal(seen["x-forwarded-for"], "203.0.113.7, 127.0.0.1");
    assert.equal(seen["x-real-ip"], "127.0.0.1");
    assert.equal(seen["x-forwarded-proto"], "http");
    assert.equal(seen["x-forwarded-host"], "app.test");
    assert.equal(seen["x-forwarded-port"], String(plane.httpPort));
    assert.equal(seen.host, "app.test");
    assert.equal(seen["x-custom"], "kept");
    assert.equal(seen["x-secret"], undefined);
    assert.equal(seen["keep-alive"], undefined);
    assert.equal(answer.headers["x-backend"], "a");
  });

  it("forwards request bodies and methods", async () => {
    const answer = await ask(plane.httpPort, "app.test", "/post", {
      method: "POST",
      body: "hello",
    });
    const seen = JSON.parse(answer.body) as { method: string; body: string };
    assert.equal(seen.method, "POST");
    assert.equal(seen.body, "hello");
  });

  it("answers 502 when the Service has no ready endpoint", async () => {
    const answer = await ask(plane.httpPort, "empty.test", "/");
    assert.equal(answer.status, 502);
    assert.equal(answer.body, "502 Bad Gateway\n");
  });

  it("retries an idempotent request on another endpoint when the connect is refused", async () => {
    for (let i = 0; i < 6; i++) {
      const answer = await ask(plane.httpPort, "retry.test", "/");
      assert.equal(backendOf(answer), "a", `request ${i}: ${answer.status}`);
    }
    assert.ok(plane.status().counters.retries >= 3);
  });

  it("does not retry a request with a body: 502 when its endpoint refuses", async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 4; i++) {
      statuses.add(
        (await ask(plane.httpPort, "retry.test", "/", { method: "POST", body: "x" })).status,
      );
    }
    assert.deepEqual([...statuses].sort(), [200, 502]);
  });

  it("answers 413 above proxy-body-size, by Content-Length or while streaming chunked", async () => {
    assert.equal(
      (await ask(plane.httpPort, "limits.test", "/", { method: "POST", body: "x".repeat(1024) }))
        .status,
      200,
    );
    assert.equal(
      (await ask(plane.httpPort, "limits.test", "/", { method: "POST", body: "x".repeat(1025) }))
        .status,
      413,
    );
    const chunked = await ask(plane.httpPort, "limits.test", "/", {
      method: "POST",
      headers: { "transfer-encoding": "chunked" },
      body: "y".repeat(4096),
    });
    assert.equal(chunked.status, 413);
  });

  it("answers 504 when the upstream does not answer within proxy-read-timeout", async () => {
    const answer = await ask(plane.httpPort, "limits.test", "/slow");
    assert.equal(answer.status, 504);
    assert.equal(answer.body, "504 Gateway Timeout\n");
  });

  it("swaps the table under a keep-alive connection; an in-flight request finishes on the old route", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let release: (() => void) | undefined;
    const held = await startBackend((_req, res) => {
      release = () => res.end("old");
    });
    backends.push(held);
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "swap",
            rules: [{ host: "swap.test", paths: [{ path: "/", service: "held" }] }],
          }),
        ],
        [loopback("held", held.port)],
      ),
    );
    const inFlight = ask(plane.httpPort, "swap.test", "/", {
      agent: new Agent({ keepAlive: false }),
    });
    await waitUntil("the held backend to get the request", () => release !== undefined);
    const first = await ask(plane.httpPort, "app.test", "/", { agent });
    assert.equal(backendOf(first), undefined); // app.test is not in this view
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "swap",
            rules: [{ host: "app.test", paths: [{ path: "/", service: "b" }] }],
          }),
        ],
        [loopback("b", b.port)],
      ),
    );
    const second = await ask(plane.httpPort, "app.test", "/", { agent });
    assert.equal(backendOf(second), "b");
    assert.equal(second.localPort, first.localPort, "the same client connection served both");
    assert.ok(release !== undefined);
    release();
    assert.equal((await inFlight).body, "old");
    assert.equal(plane.status().version, version);
    agent.destroy();
    await plane.apply(baseView(a.port));
  });

  it("streams a large upload and download both ways with backpressure", async () => {
    const size = 48 * 1024 * 1024;
    let paused: (() => void) | undefined;
    const sink = await startBackend((req, res) => {
      const hash = createHash("sha256");
      let received = 0;
      req.pause();
      paused = () => req.resume();
      req.on("data", (chunk: Buffer) => {
        received += chunk.length;
        hash.update(chunk);
      });
      req.on("end", () => res.end(JSON.stringify({ received, sha: hash.digest("hex") })));
    });
    backends.push(sink);
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "big",
            rules: [{ host: "big.test", paths: [{ path: "/", service: "sink" }] }],
          }),
        ],
        [loopback("sink", sink.port)],
      ),
    );
    const chunk = randomBytes(64 * 1024);
    const sent = createHash("sha256");
    let written = 0;
    const result = new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: plane.httpPort,
          method: "PUT",
          path: "/",
          headers: { host: "big.test", "content-length": String(size) },
        },
        res => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve(body));
        },
      );
      req.on("error", reject);
      const pump = (): void => {
        while (written < size) {
          written += chunk.length;
          sent.update(chunk);
          if (!req.write(chunk)) {
            req.once("drain", pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    // The backend reads nothing yet: the client must stall long before the whole body is out.
    await waitUntil("the paused backend to get the request", () => paused !== undefined);
    // Stalled: no progress for 200 ms. Proving that more is NOT written needs a quiet window; it
    // is waited out only until the count stops moving.
    let last = -1;
    while (written !== last) {
      last = written;
      await new Promise(resolve => setTimeout(resolve, 200));
    }
    assert.ok(written < size / 2, `client wrote ${written} of ${size} bytes into a paused backend`);
    assert.ok(paused !== undefined);
    paused();
    const answer = JSON.parse(await result) as { received: number; sha: string };
    assert.equal(answer.received, size);
    assert.equal(answer.sha, sent.digest("hex"));

    // And the other way: a large response arrives whole.
    const payload = randomBytes(16 * 1024 * 1024);
    const source = await startBackend((_req, res) => res.end(payload));
    backends.push(source);
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "big",
            rules: [{ host: "big.test", paths: [{ path: "/", service: "source" }] }],
          }),
        ],
        [loopback("source", source.port)],
      ),
    );
    const downloaded = await new Promise<Buffer>((resolve, reject) => {
      request(
        { host: "127.0.0.1", port: plane.httpPort, path: "/", headers: { host: "big.test" } },
        res => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks)));
        },
      )
        .on("error", reject)
        .end();
    });
    assert.equal(downloaded.length, payload.length);
    assert.ok(downloaded.equals(payload));
    await plane.apply(baseView(a.port));
  });

  it("counts an upgrade the upstream refuses with its status, and one the client leaves with 499", async () => {
    // No 'upgrade' listener: Node hands the request to the handler, which refuses it.
    const refusing = await startBackend((_req, res) => res.writeHead(403).end("no"));
    const silent = await startBackend(() => undefined);
    const held: { destroy: () => void }[] = [];
    silent.server.on("upgrade", (_req, socket: { destroy: () => void }) => held.push(socket)); // never answers
    backends.push(refusing, silent);
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "ws-refused",
            rules: [
              { host: "refused.test", paths: [{ path: "/", service: "refusing" }] },
              { host: "silent.test", paths: [{ path: "/", service: "silent" }] },
            ],
          }),
        ],
        [loopback("refusing", refusing.port), loopback("silent", silent.port)],
      ),
    );
    const handshake = (host: string) =>
      `GET /ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    const refused = connect(plane.httpPort, "127.0.0.1");
    const received: Buffer[] = [];
    refused.on("data", (data: Buffer) => received.push(data));
    const closed = new Promise(resolve => refused.on("close", resolve));
    refused.write(handshake("refused.test"));
    await closed;
    assert.match(Buffer.concat(received).toString(), /^HTTP\/1\.1 403 /);
    const left = connect(plane.httpPort, "127.0.0.1");
    left.write(handshake("silent.test"));
    // The client leaves once the upstream holds the upgrade: the gateway is waiting on it then.
    await waitUntil("the silent backend to hold the upgrade", () => held.length > 0);
    left.destroy();

    const classes = async (host: string) =>
      (await plane.trafficMetrics())
        .flat()
        .find(m => m.name === "bulwark_gateway_requests_total")
        ?.values.filter(v => v.labels.host === host)
        .map(v => `${v.labels.status_class} ${v.value}`) ?? [];
    await waitUntil(
      "the left upgrade to be counted",
      async () => (await classes("silent.test")).length > 0,
      15_000,
    );
    assert.deepEqual(await classes("refused.test"), ["4xx 1"], "the upstream's 403");
    assert.deepEqual(await classes("silent.test"), ["4xx 1"], "499: the client left first");
    for (const socket of held) socket.destroy();
  });

  it("proxies a WebSocket upgrade and pipes both directions", async () => {
    const echo = await startBackend(() => undefined);
    backends.push(echo);
    echo.server.on("upgrade", (req, socket) => {
      const key = String(req.headers["sec-websocket-key"]);
      const accept = createHash("sha1")
        .update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest("base64");
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nX-Forwarded-Seen: ${String(req.headers["x-forwarded-for"])}\r\n\r\n`,
      );
      socket.on("data", (data: Buffer) =>
        socket.write(Buffer.concat([Buffer.from("echo:"), data])),
      );
      socket.on("end", () => socket.end());
    });
    await plane.apply(
      view(
        ++version,
        [
          ingress({
            name: "ws",
            rules: [{ host: "ws.test", paths: [{ path: "/ws", service: "echo" }] }],
          }),
        ],
        [loopback("echo", echo.port)],
      ),
    );
    const socket = connect(plane.httpPort, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (data: Buffer) => received.push(data));
    socket.write(
      "GET /ws HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    const text = () => Buffer.concat(received).toString();
    await waitUntil("the upgrade answer", () => text().includes("\r\n\r\n"));
    assert.match(text(), /^HTTP\/1\.1 101 /);
    assert.match(text(), /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/);
    assert.match(text(), /X-Forwarded-Seen: 127\.0\.0\.1/);
    socket.write("ping-1");
    await waitUntil("the first echo", () => text().includes("echo:ping-1"));
    socket.write("ping-2");
    await waitUntil("the second echo", () => text().includes("echo:ping-2"));
    socket.destroy();
    // Counted once the tunnel closes, as nginx logs a WebSocket: 101, bytes both ways through it.
    const counted = async (name: string) => {
      const metrics = (await plane.trafficMetrics()).flat().find(m => m.name === name);
      return (metrics?.values ?? [])
        .filter(v => v.labels.host === "ws.test")
        .reduce((sum, v) => sum + v.value, 0);
    };
    const requests = await waitUntil(
      "the closed tunnel to be counted",
      async () => (await counted("bulwark_gateway_requests_total")) || undefined,
      15_000,
    );
    assert.equal(requests, 1);
    const statuses = (await plane.trafficMetrics())
      .flat()
      .find(m => m.name === "bulwark_gateway_requests_total")
      ?.values.filter(v => v.labels.host === "ws.test")
      .map(v => v.labels.status_class);
    assert.deepEqual(statuses, ["1xx"]);
    assert.equal(await counted("bulwark_gateway_request_bytes_total"), "ping-1ping-2".length);
    assert.equal(
      await counted("bulwark_gateway_response_bytes_total"),
      "echo:ping-1echo:ping-2".length,
    );
    await plane.apply(baseView(a.port));
  });
});

describe("data plane: worker processes", () => {
  it("given 2 workers, apply resolves once both serve the version, both route, and a dead worker is replaced", async () => {
    const a = await namedBackend("a");
    const b = await namedBackend("b");
    const plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      workers: 2,
      defaultCertificates: [certificate()],
    });
    try {
      const one = view(
        7,
        [ingress({ name: "w", rules: [{ host: "w.test", paths: [{ path: "/", service: "a" }] }] })],
        [loopback("a", a.port)],
      );
      const applied = await plane.apply(one);
      assert.deepEqual(applied, { version: 7, problems: [] });
      const status = plane.status();
      assert.equal(status.workers.length, 2);
      assert.deepEqual(
        status.workers.map(w => w.version),
        [7, 7],
      );
      assert.equal(status.version, 7);
      assert.equal(status.table?.routes, 1);
      for (let i = 0; i < 4; i++)
        assert.equal(backendOf(await ask(plane.httpPort, "w.test", "/")), "a");
      const two = view(
        8,
        [ingress({ name: "w", rules: [{ host: "w.test", paths: [{ path: "/", service: "b" }] }] })],
        [loopback("b", b.port)],
      );
      await plane.apply(two);
      for (let i = 0; i < 4; i++)
        assert.equal(backendOf(await ask(plane.httpPort, "w.test", "/")), "b");
      // Counters come from the workers once a second, summed.
      await waitUntil("the workers' counters", () => plane.status().counters.requests >= 8);
      const counted = plane.status().counters.requests;
      // A worker that dies is replaced, and the new one serves the latest view.
      const victim = plane.status().workers[0]!.pid;
      process.kill(victim, "SIGKILL");
      const replaced = () => {
        const workers = plane.status().workers;
        return (
          workers.length === 2 &&
          !workers.some(w => w.pid === victim) &&
          workers.every(w => w.version === 8)
        );
      };
      await waitUntil("a replacement worker serving version 8", replaced);
      // The dead worker's counters are kept.
      assert.ok(plane.status().counters.requests >= counted);
      for (let i = 0; i < 4; i++)
        assert.equal(backendOf(await ask(plane.httpPort, "w.test", "/")), "b");
    } finally {
      await plane.close({ drainMs: 200 });
      await a.close();
      await b.close();
    }
  });
});

let cached: { cert: string; key: string } | undefined;
function certificate(): { cert: string; key: string } {
  if (cached === undefined) {
    const made = makeCertificate({ key: "ecdsa", dnsNames: ["default.test"] });
    cached = { cert: made.certPem, key: made.keyPem };
  }
  return cached;
}

describe("data plane: graceful close", () => {
  it("stops accepting, lets an in-flight request finish, closes idle keep-alive connections", async () => {
    let release: (() => void) | undefined;
    const held = await startBackend((_req, res) => {
      release = () => res.end("finished");
    });
    const plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "c",
            rules: [{ host: "c.test", paths: [{ path: "/", service: "held" }] }],
          }),
        ],
        [loopback("held", held.port)],
      ),
    );
    const idle = connect(plane.httpPort, "127.0.0.1");
    const idleClosed = new Promise<void>(resolve => idle.once("close", () => resolve()));
    await new Promise<void>(resolve => idle.once("connect", () => resolve()));
    const inFlight = ask(plane.httpPort, "c.test", "/");
    await waitUntil("the held backend to get the request", () => release !== undefined);
    const closing = plane.close({ drainMs: 5000 });
    await idleClosed;
    await assert.rejects(ask(plane.httpPort, "c.test", "/"), /ECONNREFUSED/);
    assert.ok(release !== undefined);
    release();
    const answer = await inFlight;
    assert.equal(answer.status, 200);
    assert.equal(answer.body, "finished");
    assert.equal(answer.headers.connection, "close");
    await closing;
    await held.close();
  });
});
