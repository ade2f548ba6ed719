import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, loopbackSlice, view } from "../../routing/testkit";
import { ChunkedScanner } from "./chunked";
import { DEFAULT_FRONT_DOOR, isRefusal } from "../request-rules";
import { parseRequestHead, parseResponseHead } from "./heads";

describe("parseRequestHead", () => {
  it("keeps ordinary headers byte for byte and drops hop-by-hop and forwarded ones", () => {
    const head = parseRequestHead(
      "GET /a?b=1 HTTP/1.1\r\nHost: a.test\r\nX-Forwarded-For: 1.1.1.1\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nX-Real-IP: 9.9.9.9\r\nAccept: \xe9t\xe9\r\nContent-Length: 3",
    );
    assert.deepEqual(head, {
      method: "GET",
      target: "/a?b=1",
      host: "a.test",
      contentLength: 3,
      close: false,
      lines: "Host: a.test\r\nAccept: \xe9t\xe9\r\nContent-Length: 3\r\n",
      forwardedFor: "1.1.1.1",
      requestId: undefined,
      userAgent: undefined,
    });
  });

  it("takes the client's X-Request-ID out of the lines and notes the User-Agent", () => {
    const head = parseRequestHead(
      "GET / HTTP/1.1\r\nHost: a.test\r\nX-Request-ID: abc\r\nUser-Agent: curl/8\r\nx-request-id: def",
    );
    assert.ok(head !== undefined && !isRefusal(head));
    assert.equal(head.lines, "Host: a.test\r\nUser-Agent: curl/8\r\n");
    assert.equal(head.requestId, "abc, def");
    assert.equal(head.userAgent, "curl/8");
  });

  const fallbacks: [string, string][] = [
    ["an upgrade", "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade"],
    ["Expect", "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1"],
    ["HTTP/1.0", "GET / HTTP/1.0\r\nHost: a"],
    [
      "Connection naming a header",
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: x-secret\r\nX-Secret: 1",
    ],
  ];
  for (const [label, text] of fallbacks) {
    it(`given ${label}, leaves the request to Node's HTTP server`, () => {
      assert.equal(parseRequestHead(text), undefined);
    });
  }

  const refusals: [string, string, number, string][] = [
    [
      "two Content-Length headers",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1",
      400,
      "invalid-content-length",
    ],
    [
      "a Content-Length list",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1",
      400,
      "invalid-content-length",
    ],
    [
      "a signed Content-Length",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1",
      400,
      "invalid-content-length",
    ],
    [
      "a Content-Length ending in NBSP",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\xa0",
      400,
      "invalid-content-length",
    ],
    ["two Host headers", "GET / HTTP/1.1\r\nHost: a\r\nHost: b", 400, "duplicate-host"],
    ["no Host", "GET / HTTP/1.1\r\nAccept: */*", 400, "missing-host"],
    ["an empty Host", "GET / HTTP/1.1\r\nHost: ", 400, "invalid-host"],
    ["userinfo in Host", "GET / HTTP/1.1\r\nHost: a.test:80@evil.com", 400, "invalid-host"],
    ["obsolete line folding", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  2", 400, "invalid-field"],
    [
      "whitespace before the colon",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked",
      400,
      "invalid-field",
    ],
    ["a bare LF in a value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\nX-B: 2", 400, "invalid-field"],
    ["a bare CR in a value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\rX-B: 2", 400, "invalid-field"],
    ["NUL in a value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x002", 400, "invalid-field"],
    ["NUL in the target", "GET /a\x00b HTTP/1.1\r\nHost: a", 400, "invalid-path"],
    [
      "a gzip coding",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip",
      501,
      "unsupported-transfer-coding",
    ],
    [
      "chunked before another coding",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip",
      501,
      "unsupported-transfer-coding",
    ],
    [
      "a length beside a coding",
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked",
      400,
      "ambiguous-framing",
    ],
    ["a path climbing above /", "GET /a/../../etc HTTP/1.1\r\nHost: a", 400, "invalid-path"],
    ["an encoded slash", "GET /a%2fb HTTP/1.1\r\nHost: a", 400, "invalid-path"],
    ["HTTP/2.0 on this port", "GET / HTTP/2.0\r\nHost: a", 505, "unsupported-version"],
  ];
  for (const [label, text, status, reason] of refusals) {
    it(`refuses ${label} with ${status}`, () => {
      assert.deepEqual(parseRequestHead(text), { status, reason });
    });
  }

  it("serves a chunked upload itself, framed chunked upstream", () => {
    const head = parseRequestHead("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked");
    assert.ok(head !== undefined && "lines" in head);
    assert.equal(head.contentLength, -1);
    assert.equal(head.lines, "Host: a\r\nTransfer-Encoding: chunked\r\n");
  });

  it("routes an absolute-form target on its authority and sends origin-form upstream", () => {
    const head = parseRequestHead("GET http://internal.example/admin?x=1 HTTP/1.1\r\nHost: a.test");
    assert.ok(head !== undefined && "lines" in head);
    assert.equal(head.host, "internal.example");
    assert.equal(head.target, "/admin?x=1");
    assert.equal(head.lines, "Host: internal.example\r\n");
  });

  it("routes and forwards the normalized path", () => {
    const head = parseRequestHead("GET /public/%2e%2e/admin?q=/../ HTTP/1.1\r\nHost: a");
    assert.ok(head !== undefined && "lines" in head);
    assert.equal(head.target, "/admin?q=/../");
  });

  it("drops header names with an underscore unless told otherwise, as nginx does", () => {
    const text = "GET / HTTP/1.1\r\nHost: a\r\nX_Real_IP: 1.2.3.4";
    const dropped = parseRequestHead(text);
    assert.ok(dropped !== undefined && "lines" in dropped);
    assert.equal(dropped.lines, "Host: a\r\n");
    const kept = parseRequestHead(text, { ...DEFAULT_FRONT_DOOR, underscoresInHeaders: true });
    assert.ok(kept !== undefined && "lines" in kept);
    assert.equal(kept.lines, "Host: a\r\nX_Real_IP: 1.2.3.4\r\n");
  });

  it("notes Connection: close", () => {
    const head = parseRequestHead("GET / HTTP/1.1\r\nHost: a\r\nConnection: close");
    assert.ok(head !== undefined && "close" in head);
    assert.equal(head.close, true);
  });
});

describe("parseResponseHead", () => {
  const cases: [string, string, boolean, object][] = [
    [
      "a length",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5",
      false,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nContent-Length: 5",
        framing: "length",
        length: 5,
        upstreamCloses: false,
      },
    ],
    [
      "chunked",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
      false,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
        framing: "chunked",
        length: 0,
        upstreamCloses: false,
      },
    ],
    [
      "no length (close-delimited)",
      "HTTP/1.1 200 OK\r\nX-A: 1",
      false,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nX-A: 1",
        framing: "close",
        length: 0,
        upstreamCloses: true,
      },
    ],
    [
      "an answer to HEAD",
      "HTTP/1.1 200 OK\r\nContent-Length: 5",
      true,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nContent-Length: 5",
        framing: "none",
        length: 0,
        upstreamCloses: false,
      },
    ],
    [
      "204",
      "HTTP/1.1 204 No Content",
      false,
      {
        status: 204,
        head: "HTTP/1.1 204 No Content",
        framing: "none",
        length: 0,
        upstreamCloses: false,
      },
    ],
    [
      "HTTP/1.0",
      "HTTP/1.0 200 OK\r\nContent-Length: 1",
      false,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nContent-Length: 1",
        framing: "length",
        length: 1,
        upstreamCloses: true,
      },
    ],
    [
      "Connection: close",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close",
      false,
      {
        status: 200,
        head: "HTTP/1.1 200 OK\r\nContent-Length: 1",
        framing: "length",
        length: 1,
        upstreamCloses: true,
      },
    ],
  ];
  for (const [label, text, head, expected] of cases) {
    it(`given ${label}, frames it`, () => {
      assert.deepEqual(parseResponseHead(text, head), expected);
    });
  }
  it("given conflicting lengths or no status line, refuses", () => {
    assert.equal(
      parseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2", false),
      undefined,
    );
    assert.equal(parseResponseHead("hello", false), undefined);
    const refused = [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked",
      "HTTP/1.1 200 OK\r\nX-A: 1\nTransfer-Encoding: chunked",
      "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2",
      "HTTP/1.1 200 O\x00K",
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c",
    ];
    for (const head of refused) assert.equal(parseResponseHead(head, false), undefined, head);
  });

  it("removes the fields the upstream's Connection names, never its framing", () => {
    const parsed = parseResponseHead(
      "HTTP/1.1 200 OK\r\nConnection: x-internal, content-length\r\nX-Internal: 1\r\nContent-Length: 2\r\nX-B: 2",
      false,
    );
    assert.equal(parsed?.head, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-B: 2");
  });
});

describe("ChunkedScanner", () => {
  it("finds the end of a chunked body split anywhere, trailers included", () => {
    const body = Buffer.from(
      "5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT",
    );
    const end = body.length - 4;
    for (let split = 1; split < body.length; split++) {
      const scanner = new ChunkedScanner();
      const first = scanner.scan(body.subarray(0, split), 0);
      const found = first >= 0 ? first : split + scanner.scan(body.subarray(split), 0);
      assert.equal(found, end, `split at ${split}`);
      // 5 + 26 payload bytes, whatever the split: the metrics count the body without framing.
      assert.equal(scanner.payload, 31, `payload, split at ${split}`);
    }
  });
  it("refuses a bad size line", () => {
    assert.equal(new ChunkedScanner().scan(Buffer.from("zz\r\n"), 0), -2);
  });
  const malformed: [string, string][] = [
    ["a bare LF after the size", "1\nx\r\n0\r\n\r\n"],
    ["a bare LF after the data", "1\r\nx\n0\r\n\r\n"],
    ["a bare LF in an extension", "1;a\nb\r\nx\r\n0\r\n\r\n"],
    ["a control character in an extension", "1;a\x00\r\nx\r\n0\r\n\r\n"],
    ["a space inside the size", "1 0\r\nx\r\n"],
    ["a bare LF ending a trailer", "0\r\nX-T: 1\n\r\n"],
    ["obs-fold in a trailer", "0\r\nX-T: 1\r\n 2\r\n\r\n"],
    ["a bare LF ending the body", "0\r\n\n"],
    ["a size of 13 hex digits", "1000000000000\r\n"],
  ];
  for (const [label, text] of malformed) {
    it(`refuses ${label}`, () => {
      assert.equal(new ChunkedScanner().scan(Buffer.from(text, "latin1"), 0), -2);
    });
  }
  it("takes BWS before an extension, as RFC 9112 allows", () => {
    const body = Buffer.from("1 ;a=b\r\nx\r\n0\r\n\r\n");
    assert.equal(new ChunkedScanner().scan(body, 0), body.length);
  });
});

/** A backend speaking raw HTTP: `answer` gets each request head and writes what it likes. */
async function rawBackend(
  answer: (head: string, socket: Socket) => void,
): Promise<{ port: number; server: Server; connections: number }> {
  const state = { port: 0, server: createServer(), connections: 0 };
  state.server.on("connection", socket => {
    state.connections++;
    let buffered = "";
    socket.on("data", (data: Buffer) => {
      buffered += data.toString("latin1");
      let end = buffered.indexOf("\r\n\r\n");
      while (end >= 0) {
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.slice(end + 4 + length);
        answer(head, socket);
        end = buffered.indexOf("\r\n\r\n");
      }
    });
  });
  await new Promise<void>(resolve => state.server.listen(0, "127.0.0.1", resolve));
  state.port = (state.server.address() as AddressInfo).port;
  return state;
}

/** Sends raw bytes and collects what comes back until `done` says so or the socket closes. */
function exchange(
  port: number,
  text: string,
  done: (received: string) => boolean,
  body?: Buffer,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1");
      if (done(received)) {
        socket.destroy();
        resolve({ text: received, closed: false });
      }
    });
    socket.on("end", () => resolve({ text: received, closed: true }));
    socket.on("error", reject);
    socket.write(text);
    if (body !== undefined) socket.write(body);
  });
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe("fast path over real sockets", () => {
  let plane: DataPlane;
  let backend: Awaited<ReturnType<typeof rawBackend>>;

  before(async () => {
    backend = await rawBackend((head, socket) => {
      const path = head.split(" ")[1] ?? "";
      if (path === "/chunked") {
        socket.write(
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
        );
      } else if (path === "/close-delimited") {
        socket.end("HTTP/1.1 200 OK\r\n\r\nuntil-close");
      } else if (path === "/upstream-closes") {
        socket.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
      } else if (path === "/head") {
        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
      } else if (path === "/hints") {
        socket.write(
          "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
        );
      } else {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${path.length}\r\n\r\n${path}`);
      }
    });
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "raw",
            rules: [{ host: "raw.test", paths: [{ path: "/", service: "raw" }] }],
          }),
        ],
        [loopbackSlice("raw", backend.port)],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 100 });
    backend.server.close();
  });

  it("answers pipelined requests in order on one connection, reusing one upstream connection", async () => {
    const before = backend.connections;
    const requests = ["/one", "/two", "/three"]
      .map(p => `GET ${p} HTTP/1.1\r\nHost: raw.test\r\n\r\n`)
      .join("");
    const { text } = await exchange(plane.httpPort, requests, r => r.endsWith("/three"));
    assert.deepEqual(
      [...text.matchAll(/\r\n\r\n(\/[a-z]+)/g)].map(m => m[1]),
      ["/one", "/two", "/three"],
    );
    assert.ok(backend.connections - before <= 1);
  });

  it("passes a chunked response through with its trailer and keeps the connection", async () => {
    const { text, closed } = await exchange(
      plane.httpPort,
      "GET /chunked HTTP/1.1\r\nHost: raw.test\r\n\r\nGET /after HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      r => r.endsWith("/after"),
    );
    assert.match(
      text,
      /Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\nHTTP\/1\.1 200 OK/,
    );
    assert.equal(closed, false);
  });

  it("ends a close-delimited response by closing the client connection", async () => {
    const { text, closed } = await exchange(
      plane.httpPort,
      "GET /close-delimited HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      () => false,
    );
    assert.match(text, /Connection: close\r\n\r\nuntil-close$/);
    assert.equal(closed, true);
  });

  it("keeps the client connection when the upstream closes its own", async () => {
    const { text } = await exchange(
      plane.httpPort,
      "GET /upstream-closes HTTP/1.1\r\nHost: raw.test\r\n\r\nGET /next HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      r => r.endsWith("/next"),
    );
    assert.equal(count(text, "HTTP/1.1 200 OK"), 2);
    assert.doesNotMatch(text, /Connection: close/);
  });

  it("answers HEAD without a body and goes on", async () => {
    const { text } = await exchange(
      plane.httpPort,
      "HEAD /head HTTP/1.1\r\nHost: raw.test\r\n\r\nGET /x HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      r => r.endsWith("/x"),
    );
    assert.match(
      text,
      /^HTTP\/1\.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP\/1\.1 200 OK\r\nContent-Length: 2\r\n\r\n\/x$/,
    );
  });

  it("passes 103 Early Hints on before the final answer", async () => {
    const { text } = await exchange(
      plane.httpPort,
      "GET /hints HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      r => r.endsWith("body"),
    );
    assert.match(text, /^HTTP\/1\.1 103 Early Hints\r\nLink: <\/a\.css>\r\n\r\nHTTP\/1\.1 200 OK/);
  });

  it("hands HTTP/1.0 and Expect: 100-continue to Node's server, which still proxies them", async () => {
    const old = await exchange(
      plane.httpPort,
      "GET /legacy HTTP/1.0\r\nHost: raw.test\r\n\r\n",
      () => false,
    );
    assert.match(old.text, /^HTTP\/1\.1 200 OK/);
    assert.match(old.text, /\/legacy$/);
    const expect = await exchange(
      plane.httpPort,
      "PUT /expect HTTP/1.1\r\nHost: raw.test\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
      r => r.endsWith("/expect"),
    );
    assert.match(expect.text, /HTTP\/1\.1 200 OK/);
  });

  it("answers 400 to garbage and 404 to unknown hosts without an upstream", async () => {
    const garbage = await exchange(plane.httpPort, "NOT HTTP\r\n\r\n", () => false);
    assert.match(garbage.text, /^HTTP\/1\.1 400/);
    const unknown = await exchange(
      plane.httpPort,
      "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
      r => r.endsWith("Found\n"),
    );
    assert.match(unknown.text, /^HTTP\/1\.1 404 Not Found/);
  });
});

describe("fast path: a long pipeline", () => {
  it("answers 5000 pipelined requests sent in one write, in order", async () => {
    const plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    try {
      await plane.apply(view(1, []));
      const requests = "GET / HTTP/1.1\r\nHost: none.test\r\n\r\n".repeat(5000);
      const { text } = await exchange(
        plane.httpPort,
        requests,
        r => count(r, "404 Not Found\n") === 5000,
      );
      assert.equal(count(text, "HTTP/1.1 404 Not Found\r\n"), 5000);
    } finally {
      await plane.close({ drainMs: 100 });
    }
  });
});

// Plain upstream connections read into a buffer of their own (Node's onread), which the next read
// overwrites: whatever the exchange still holds when a read ends must have moved elsewhere.
describe("fast path: the upstream read buffer", () => {
  let plane: DataPlane;
  let backend: Awaited<ReturnType<typeof rawBackend>>;
  let pacedPort = 0;
  let paced: ChildProcess;

  before(async () => {
    backend = await rawBackend((head, socket) => {
      const path = head.split(" ")[1] ?? "";
      if (path === "/split-head") {
        // Each piece lands at the start of the read buffer; a kept piece must survive the next.
        const pieces = [
          `HTTP/1.1 200 OK\r\nX-First: ${"a".repeat(40)}`,
          `${"b".repeat(40)}\r\nContent-Length: 5\r\n`,
          "\r\nhello",
        ];
        pieces.forEach((piece, i) => setTimeout(() => socket.write(piece), i * 30));
      } else {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${path.length}\r\n\r\n${path}`);
      }
    });
    // A process of its own, so its pacing is not the gateway's event loop: the gateway reads each
    // 8 KiB piece as it comes, less than a socket's high-water mark, so writing it to a client
    // that does not read leaves it pending without pausing the upstream.
    paced = spawn(process.execPath, ["-e", PACED_BACKEND], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    pacedPort = await new Promise<number>(resolve =>
      paced.stdout!.once("data", (data: Buffer) => resolve(Number(data.toString()))),
    );
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const rule = (host: string, service: string) => ({ host, paths: [{ path: "/", service }] });
    await plane.apply(
      view(
        1,
        [ingress({ name: "raw", rules: [rule("raw.test", "raw"), rule("paced.test", "paced")] })],
        [loopbackSlice("raw", backend.port), loopbackSlice("paced", pacedPort)],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 100 });
    backend.server.close();
    paced.kill();
  });

  it("keeps a response head that comes in pieces intact", async () => {
    const { text } = await exchange(
      plane.httpPort,
      "GET /split-head HTTP/1.1\r\nHost: raw.test\r\n\r\n",
      r => r.endsWith("hello"),
    );
    assert.ok(text.includes(`\r\nX-First: ${"a".repeat(40)}${"b".repeat(40)}\r\n`), text);
    assert.ok(text.endsWith("\r\n\r\nhello"));
  });

  it("passes a large body intact to a client that reads late, then serves the next request", async () => {
    const socket = connect(plane.httpPort, "127.0.0.1");
    socket.pause(); // the kernel's buffers fill, then the gateway's writes to it stay pending
    socket.write(
      "GET /big HTTP/1.1\r\nHost: paced.test\r\n\r\nGET /after HTTP/1.1\r\nHost: paced.test\r\n\r\n",
    );
    await new Promise(resolve => setTimeout(resolve, 1500));
    const chunks: Buffer[] = [];
    const received = await new Promise<Buffer>((resolve, reject) => {
      socket.on("data", (data: Buffer) => {
        chunks.push(data);
        if (data.toString("latin1").endsWith("\r\n\r\nafter")) resolve(Buffer.concat(chunks));
      });
      socket.on("error", reject);
      socket.resume();
    });
    socket.destroy();
    const expected = pacedBody();
    const start = received.indexOf("\r\n\r\n") + 4;
    const body = received.subarray(start, start + expected.length);
    const digest = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
    assert.equal(digest(body), digest(expected));
    assert.match(
      received.subarray(start + expected.length).toString("latin1"),
      /^HTTP\/1\.1 200 OK\r\n/,
    );
  });
});

describe("fast path: upstream timeouts count from the last read or write", () => {
  let plane: DataPlane;
  let backend: Awaited<ReturnType<typeof rawBackend>>;
  let stalled: Server;
  const P = "nginx.ingress.kubernetes.io/";

  before(async () => {
    backend = await rawBackend((_head, socket) => {
      // 8 bytes, one every 250 ms: 2 s in all, never 1 s without a read.
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n");
      for (let i = 0; i < 8; i++) setTimeout(() => socket.write(String(i)), (i + 1) * 250);
    });
    // Takes connections and never reads from them: a request body's writes stay queued.
    stalled = createServer(socket => socket.pause());
    await new Promise<void>(resolve => stalled.listen(0, "127.0.0.1", resolve));
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const annotations = { [`${P}proxy-read-timeout`]: "1", [`${P}proxy-send-timeout`]: "1" };
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "timed",
            annotations,
            rules: [
              { host: "dribble.test", paths: [{ path: "/", service: "dribble" }] },
              { host: "stalled.test", paths: [{ path: "/", service: "stalled" }] },
            ],
          }),
        ],
        [
          loopbackSlice("dribble", backend.port),
          loopbackSlice("stalled", (stalled.address() as AddressInfo).port),
        ],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 100 });
    backend.server.close();
    stalled.close();
  });

  it("passes a response that takes longer than proxy-read-timeout, read by read within it", async () => {
    const { text, closed } = await exchange(
      plane.httpPort,
      "GET / HTTP/1.1\r\nHost: dribble.test\r\n\r\n",
      r => r.endsWith("01234567"),
    );
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(text.endsWith("\r\n\r\n01234567"), text);
    assert.equal(closed, false);
  });

  it(
    "answers 504 once a body's writes to the upstream stall for proxy-send-timeout",
    { timeout: 20_000 },
    async () => {
      const body = 64 * 1024 * 1024;
      const started = performance.now();
      const { text, closed } = await exchange(
        plane.httpPort,
        `POST / HTTP/1.1\r\nHost: stalled.test\r\nContent-Length: ${body}\r\n\r\n`,
        r => r.includes("\r\n\r\n"),
        Buffer.alloc(body, 0x61),
      );
      assert.match(text, /^HTTP\/1\.1 504 Gateway Timeout\r\n/);
      assert.equal(closed, false);
      const ms = performance.now() - started;
      assert.ok(ms > 900, `${ms} ms`);
    },
  );
});

/** The paced backend's body: piece i is 8 KiB of the byte i % 251, its first 4 bytes i. */
const PACED_PIECES = 1024;
function pacedPiece(i: number): Buffer {
  const piece = Buffer.alloc(8192, i % 251);
  piece.writeUInt32BE(i);
  return piece;
}
function pacedBody(): Buffer {
  return Buffer.concat(Array.from({ length: PACED_PIECES }, (_, i) => pacedPiece(i)));
}
/** Answers its first request with the paced body, 8 KiB a millisecond; later ones with "after". */
const PACED_BACKEND = `
const net = require("node:net");
${pacedPiece.toString()}
const server = net.createServer(socket => {
  let requests = 0;
  socket.on("data", data => {
    for (const _ of data.toString("latin1").matchAll(/\\r\\n\\r\\n/g)) {
      if (requests++ > 0) {
        socket.write("HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\n\\r\\nafter");
        continue;
      }
      socket.write("HTTP/1.1 200 OK\\r\\nContent-Length: ${PACED_PIECES * 8192}\\r\\n\\r\\n");
      let i = 0;
      const timer = setInterval(() => {
        socket.write(pacedPiece(i));
        if (++i === ${PACED_PIECES}) clearInterval(timer);
      }, 1);
    }
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;
