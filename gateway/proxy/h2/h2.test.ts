// HTTP/2 on the HTTPS listener, over real sockets: ALPN per SNI name, and every route behaviour
// answered the same to an h2 stream as to an HTTPS/1.1 request (the differential cases), plus what
// only HTTP/2 has (":authority", cookie crumbs, a body without content-length, framing upstream).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "../../../test/harness/wait";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, loopbackSlice, view } from "../../routing/testkit";
import { DEFAULT_FRONT_DOOR } from "../request-rules";
import { namedBackend, startBackend, type Backend } from "../testkit";
import {
  askH2,
  askHttps,
  askOn,
  getHeaderBlock,
  literal,
  negotiated,
  openSession,
  PREFACE,
  FLAG,
  FRAME,
  frame,
  rawH2,
  readFrames,
  type H2Answer,
  type H2AskOptions,
} from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

/** An HTTP/1.0 GET on a raw socket (Node's client speaks only HTTP/1.1); resolves when answered. */
function askHttp10(port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write(`GET / HTTP/1.0\r\nHost: ${host}\r\n\r\n`),
    );
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

/** The backend's echo without what differs per request (the request id). */
function comparable(answer: H2Answer) {
  const headers: Record<string, unknown> = {};
  for (const name of ["x-backend", "x-served-by", "location", "content-type"]) {
    headers[name] = answer.headers[name];
  }
  for (const name of Object.keys(answer.headers)) {
    if (name.startsWith("access-control-")) headers[name] = answer.headers[name];
  }
  let body: unknown = answer.body;
  try {
    const echo = JSON.parse(answer.body) as { headers: Record<string, string> };
    delete echo.headers["x-request-id"];
    // Node's upstream agent announces keep-alive, the raw paths' upstreams do not (HTTP/1.1
    // requests on the HTTPS port take the fast path; h2 streams of routes with a traffic policy
    // take Node's path, of plain routes the raw-pool path).
    delete echo.headers.connection;
    body = echo;
  } catch {
    // not an echo: compared as text
  }
  return { status: answer.status, headers, body };
}

describe("data plane: HTTP/2 on the HTTPS listener", () => {
  let main: Backend;
  let beta: Backend;
  let hop: Backend;
  /** Paths the spy backend (spy.test) was asked for. */
  const spied: string[] = [];
  let spy: Backend;
  let plane: DataPlane;
  const logPath = join(mkdtempSync(join(tmpdir(), "h2-")), "access.log");

  before(async () => {
    [main, beta] = [await namedBackend("main"), await namedBackend("beta")];
    // An upstream answering with HTTP/1.1 connection-specific fields, chunked.
    hop = await startBackend((_req, res) => {
      res.writeHead(200, {
        connection: "keep-alive, x-hop",
        "keep-alive": "timeout=5",
        "x-hop": "secret",
        "proxy-connection": "keep-alive",
        upgrade: "h2c",
        "x-end": "kept",
      });
      res.write("chunk 1;");
      res.end("chunk 2");
    });
    spy = await startBackend((req, res) => {
      spied.push(req.url ?? "");
      res.end("seen");
    });
    plane = await startDataPlane({
      httpPort: 0,
      httpsPort: 0,
      host: "127.0.0.1",
      observe: { metrics: true, accessLog: true, accessLogPath: logPath },
      frontDoor: { ...DEFAULT_FRONT_DOOR },
    });
    const route = (name: string, host: string, annotations: Record<string, string>, path = "/") =>
      ingress({ name, annotations, rules: [{ host, paths: [{ path, service: "main" }] }] });
    await plane.apply(
      view(
        1,
        [
          route("shop", "shop.test", {
            [`${P}enable-cors`]: "true",
            [`${P}cors-allow-origin`]: "https://a.example",
            [`${P}disable-robots`]: "true",
          }),
          ingress({
            name: "shop-beta",
            created: "2025-01-02T00:00:00Z",
            annotations: {
              [`${P}canary`]: "true",
              [`${P}canary-by-header`]: "X-Beta",
              [`${P}canary-response-add-header`]: "X-Served-By:beta",
            },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "beta" }] }],
          }),
          route("api", "api.test", { [`${P}rewrite-target`]: "/$2" }, "/v1(/|$)(.*)"),
          route("moved", "moved.test", { [`${P}temporal-redirect`]: "https://new.example/home" }),
          route("small", "small.test", { [`${P}proxy-body-size`]: "16" }),
          route("office", "office.test", { [`${P}whitelist-source-range`]: "10.0.0.0/8" }),
          route("h1only", "h1only.test", { "bulwark.dev/http2": "false" }),
          route("counted", "counted.test", {}),
          ingress({
            name: "spy",
            rules: [{ host: "spy.test", paths: [{ path: "/", service: "spy" }] }],
          }),
          ingress({
            name: "hop",
            rules: [{ host: "hop.test", paths: [{ path: "/", service: "hop" }] }],
          }),
        ],
        [
          loopbackSlice("main", main.port),
          loopbackSlice("beta", beta.port),
          loopbackSlice("hop", hop.port),
          loopbackSlice("spy", spy.port),
        ],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await Promise.all([main.close(), beta.close(), hop.close(), spy.close()]);
  });

  describe("ALPN", () => {
    it("offers h2 before http/1.1 on the HTTPS port", async () => {
      assert.equal(await negotiated(plane.httpsPort!, "shop.test", ["h2", "http/1.1"]), "h2");
      assert.equal(await negotiated(plane.httpsPort!, "shop.test", ["http/1.1"]), "http/1.1");
      assert.equal(await negotiated(plane.httpsPort!, "unknown.test", ["h2", "http/1.1"]), "h2");
    });

    it("offers http/1.1 only to a host whose Ingress says bulwark.dev/http2: false", async () => {
      assert.equal(
        await negotiated(plane.httpsPort!, "h1only.test", ["h2", "http/1.1"]),
        "http/1.1",
      );
      const answer = await askHttps(plane.httpsPort!, "h1only.test", "/");
      assert.equal(answer.status, 200);
    });
  });

  describe("the same answers as HTTPS/1.1", () => {
    const cases: [string, string, string, H2AskOptions][] = [
      ["routing by host and path", "shop.test", "/a?b=1", {}],
      ["the canary header", "shop.test", "/", { headers: { "x-beta": "always" } }],
      ["the canary header's never", "shop.test", "/", { headers: { "x-beta": "never" } }],
      [
        "a CORS preflight",
        "shop.test",
        "/",
        {
          method: "OPTIONS",
          headers: { origin: "https://a.example", "access-control-request-method": "PUT" },
        },
      ],
      ["a CORS request", "shop.test", "/", { headers: { origin: "https://a.example" } }],
      ["robots", "shop.test", "/robots.txt", {}],
      ["rewrite-target", "api.test", "/v1/users/7", {}],
      ["a redirect", "moved.test", "/x", {}],
      [
        "a body within the limit",
        "small.test",
        "/",
        { method: "POST", body: "0123456789", headers: { "content-length": "10" } },
      ],
      ["a body over the limit", "small.test", "/", { method: "POST", body: "0123456789abcdefXYZ" }],
      ["a client outside the source ranges", "office.test", "/", {}],
      ["a host without route", "nobody.test", "/", {}],
      ["a path with dot segments", "shop.test", "/a/../b/./c", {}],
    ];
    for (const [name, host, path, options] of cases) {
      it(name, async () => {
        const h1 = await askHttps(plane.httpsPort!, host, path, options);
        const h2 = await askH2(plane.httpsPort!, host, path, options);
        assert.deepEqual(comparable(h2), comparable(h1));
      });
    }
  });

  describe("HTTP/2 requests", () => {
    it("routes by :authority, and by Host when :authority is absent", async () => {
      const session = await openSession(plane.httpsPort!, "shop.test");
      try {
        const byAuthority = await askOn(session, "shop.test", "/", {});
        assert.equal(byAuthority.headers["x-backend"], "main");
        const byHost = await askOn(session, "shop.test", "/v1/x", {
          authority: "",
          headers: { host: "api.test" },
        });
        assert.deepEqual(JSON.parse(byHost.body).url, "/x");
        assert.equal(JSON.parse(byHost.body).headers.host, "api.test");
      } finally {
        session.close();
      }
    });

    it("refuses :authority and Host that disagree (400), as HTTP/1.1 routes on one Host only", async () => {
      const answer = await askH2(plane.httpsPort!, "shop.test", "/", {
        headers: { host: "api.test" },
      });
      assert.equal(answer.status, 400);
    });

    it("routes on :authority whatever the SNI name, as HTTP/1.1 routes on Host", async () => {
      const session = await openSession(plane.httpsPort!, "shop.test");
      try {
        const answer = await askOn(session, "api.test", "/v1/x", {});
        assert.equal(JSON.parse(answer.body).url, "/x");
      } finally {
        session.close();
      }
    });

    it("sends the upstream HTTP/1.1 fields: Host, one Cookie, X-Forwarded-Proto https, no pseudo-headers", async () => {
      const answer = await askH2(plane.httpsPort!, "shop.test", "/", {
        headers: { cookie: ["a=1", "b=2"], te: "trailers" },
      });
      const seen = JSON.parse(answer.body).headers as Record<string, string>;
      assert.equal(seen.host, "shop.test");
      assert.equal(seen.cookie, "a=1; b=2");
      assert.equal(seen["x-forwarded-proto"], "https");
      assert.equal(seen.te, undefined);
      assert.ok(
        Object.keys(seen).every(name => !name.startsWith(":")),
        Object.keys(seen).join(),
      );
    });

    it("frames a body without content-length as chunked upstream, one with it by its length", async () => {
      const session = await openSession(plane.httpsPort!, "shop.test");
      try {
        const streamed = await askOn(session, "shop.test", "/", {
          method: "POST",
          body: "streamed",
        });
        const streamedSeen = JSON.parse(streamed.body);
        assert.equal(streamedSeen.body, "streamed");
        assert.equal(streamedSeen.headers["transfer-encoding"], "chunked");
        assert.equal(streamedSeen.headers["content-length"], undefined);
        const sized = await askOn(session, "shop.test", "/", {
          method: "POST",
          body: "sized",
          headers: { "content-length": "5" },
        });
        const sizedSeen = JSON.parse(sized.body);
        assert.equal(sizedSeen.body, "sized");
        assert.equal(sizedSeen.headers["content-length"], "5");
        assert.equal(sizedSeen.headers["transfer-encoding"], undefined);
      } finally {
        session.close();
      }
    });

    it("counts a body without content-length against the route's limit (413)", async () => {
      const answer = await askH2(plane.httpsPort!, "small.test", "/", {
        method: "PUT",
        body: Buffer.alloc(64 * 1024, 97),
      });
      assert.equal(answer.status, 413);
    });

    it("drops the upstream's connection-specific fields (and what Connection names)", async () => {
      const answer = await askH2(plane.httpsPort!, "hop.test", "/");
      assert.equal(answer.status, 200);
      assert.equal(answer.body, "chunk 1;chunk 2");
      assert.equal(answer.headers["x-end"], "kept");
      for (const name of [
        "connection",
        "keep-alive",
        "x-hop",
        "proxy-connection",
        "upgrade",
        "transfer-encoding",
      ]) {
        assert.equal(answer.headers[name], undefined, name);
      }
    });

    it("counts requests per protocol: HTTP/2.0 for h2 streams, HTTP/1.1 and HTTP/1.0 otherwise", async () => {
      await askH2(plane.httpsPort!, "counted.test", "/");
      await askH2(plane.httpsPort!, "counted.test", "/two");
      await askHttps(plane.httpsPort!, "counted.test", "/");
      await askHttp10(plane.httpPort, "counted.test");
      // An exchange is counted when its response closes, which may come after the client read it.
      const byProtocol = await waitUntil("four requests counted", async () => {
        const requests = (await plane.trafficMetrics())
          .flat()
          .find(m => m.name === "bulwark_gateway_requests_total");
        const counted = (requests?.values ?? []).filter(v => v.labels.host === "counted.test");
        const total = counted.reduce((sum, v) => sum + v.value, 0);
        return total === 4 && Object.fromEntries(counted.map(v => [v.labels.protocol, v.value]));
      });
      assert.deepEqual(byProtocol, { "HTTP/2.0": 2, "HTTP/1.1": 1, "HTTP/1.0": 1 });
    });

    it("writes the access log's protocol as HTTP/2.0", async () => {
      await askH2(plane.httpsPort!, "shop.test", "/logged-h2");
      const line = () =>
        existsSync(logPath)
          ? readFileSync(logPath, "utf8")
              .split("\n")
              .filter(l => l.includes("/logged-h2"))
              .map(l => JSON.parse(l) as Record<string, unknown>)[0]
          : undefined;
      await waitUntil("the access log line", () => line() !== undefined);
      assert.equal(line()!.protocol, "HTTP/2.0");
      assert.equal(line()!.scheme, "https");
      assert.equal(line()!.status, 200);
    });
  });

  describe("malformed streams (frames written by hand)", () => {
    let sent = 0;
    /**
     * Sends one HEADERS frame (stream 1, END_STREAM) for spy.test with `fields` after the request
     * line's pseudo-headers; the frames of stream 1, and whether the backend was asked.
     */
    async function sendMalformed(block: (path: string) => Buffer) {
      const path = `/malformed-${++sent}`;
      const socket = await rawH2(plane.httpsPort!, "spy.test");
      const seen = readFrames(socket);
      socket.write(
        Buffer.concat([
          PREFACE,
          frame(FRAME.SETTINGS, 0, 0),
          frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, block(path)),
        ]),
      );
      await waitUntil("an answer on stream 1", () => seen.frames.some(f => f.streamId === 1));
      socket.destroy();
      // A request after it, answered: had the malformed one gone upstream, it would be seen first.
      assert.equal((await askH2(plane.httpsPort!, "spy.test", "/after")).body, "seen");
      const frames = seen.frames.filter(f => f.streamId === 1);
      return { frames, forwarded: spied.includes(path) };
    }

    /** Refused: the stream is reset, or answered by the gateway (never with the backend's body). */
    function assertRefused(answer: Awaited<ReturnType<typeof sendMalformed>>) {
      assert.equal(answer.forwarded, false);
      const first = answer.frames[0]!;
      assert.ok(
        first.type === FRAME.RST_STREAM || first.type === FRAME.HEADERS,
        String(first.type),
      );
      const data = answer.frames.filter(f => f.type === FRAME.DATA).map(f => f.payload.toString());
      assert.ok(!data.includes("seen"), data.join());
    }

    for (const [name, field] of [
      ["Connection", literal("connection", "keep-alive")],
      ["Transfer-Encoding", literal("transfer-encoding", "chunked")],
      ["Upgrade", literal("upgrade", "websocket")],
      ["Keep-Alive", literal("keep-alive", "timeout=5")],
      ["Proxy-Connection", literal("proxy-connection", "keep-alive")],
      ["TE other than trailers", literal("te", "gzip")],
      ["an upper-case field name", literal("X-Upper", "1")],
      ["an unknown pseudo-header", literal(":protocol", "websocket")],
      ["a second :path", literal(":path", "/other")],
      ["a Host that differs from :authority", literal("host", "shop.test")],
    ] as const) {
      it(`refuses a request with ${name} and never forwards it`, async () => {
        assertRefused(
          await sendMalformed(path => Buffer.concat([getHeaderBlock("spy.test", path), field])),
        );
      });
    }

    it("refuses a pseudo-header after a regular field", async () => {
      const answer = await sendMalformed(path =>
        Buffer.concat([
          Buffer.from([0x82, 0x87]),
          literal("x-a", "1"),
          literal(":path", path),
          literal(":authority", "spy.test"),
        ]),
      );
      assertRefused(answer);
    });

    it("refuses a request without :scheme", async () => {
      const answer = await sendMalformed(path =>
        Buffer.concat([
          Buffer.from([0x82]),
          literal(":path", path),
          literal(":authority", "spy.test"),
        ]),
      );
      assertRefused(answer);
    });

    it("refuses an absolute :path", async () => {
      const answer = await sendMalformed(path =>
        Buffer.concat([
          Buffer.from([0x82, 0x87]),
          literal(":path", `https://spy.test${path}`),
          literal(":authority", "spy.test"),
        ]),
      );
      assertRefused(answer);
    });

    it("refuses CONNECT (Node answers 405 itself)", async () => {
      const answer = await sendMalformed(() =>
        Buffer.concat([literal(":method", "CONNECT"), literal(":authority", "spy.test:443")]),
      );
      assertRefused(answer);
    });
  });
});
