// h2c on the HTTP port: prior knowledge only, behind BULWARK_HTTP2_CLEARTEXT (off by default), and
// `Upgrade: h2c` never honoured. The preface detection and the upgrade rewrite as pure functions,
// then over real sockets: Node's http2 client, hand-made bytes, curl and nghttp.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { connect as connectH2, constants, type ClientHttp2Session } from "node:http2";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "../../../test/harness/wait";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, view } from "../../routing/testkit";
import { DEFAULT_FRONT_DOOR, type FrontDoorLimits } from "../request-rules";
import { hostsView, loopback, namedBackend, startBackend, type Backend } from "../testkit";
import { MAX_CONCURRENT_STREAMS } from "./front";
import { asksOnlyH2c, CLIENT_PREFACE, headWithoutH2cUpgrade, prefaceMatch } from "./cleartext";
import {
  askOn,
  FLAG,
  FRAME,
  frame,
  getHeaderBlock,
  negotiated,
  rawH2c,
  readFrames,
} from "./testkit";

const run = promisify(execFile);

/** What curl's `--http2` sends on an http:// URL (RFC 7540 3.2's upgrade). */
const UPGRADE_FIELDS = [
  "Connection: Upgrade, HTTP2-Settings",
  "Upgrade: h2c",
  "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA",
];

describe("prefaceMatch", () => {
  it("is h2 once the whole preface has come, whatever follows it", () => {
    assert.equal(prefaceMatch(CLIENT_PREFACE), "h2");
    assert.equal(prefaceMatch(Buffer.concat([CLIENT_PREFACE, frame(FRAME.SETTINGS, 0, 0)])), "h2");
  });
  it("waits while the bytes are a proper prefix of the preface, one byte at a time", () => {
    for (let length = 0; length < CLIENT_PREFACE.length; length++) {
      assert.equal(prefaceMatch(CLIENT_PREFACE.subarray(0, length)), "more", `${length} bytes`);
    }
  });
  it("is http1 at the first byte that differs", () => {
    for (const text of [
      "GET / HTTP/1.1\r\n",
      "P",
      "POST / HTTP/1.1\r\n",
      "PRI / HTTP/1.1\r\nHost: a\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\nX",
      "pri * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ]) {
      const expected = text === "P" ? "more" : "http1";
      assert.equal(prefaceMatch(Buffer.from(text, "latin1")), expected, JSON.stringify(text));
    }
  });
});

describe("Upgrade: h2c", () => {
  it("asksOnlyH2c: h2c alone (any case, repeated, spaced), never with another protocol", () => {
    for (const value of ["h2c", "H2C", " h2c ", "h2c, h2c", "h2c,"]) {
      assert.equal(asksOnlyH2c(value), true, value);
    }
    for (const value of [undefined, "", ",", "websocket", "h2c, websocket", "h2", "h2c2"]) {
      assert.equal(asksOnlyH2c(value), false, String(value));
    }
  });
  it("headWithoutH2cUpgrade drops Upgrade, HTTP2-Settings and their Connection tokens, keeps the rest", () => {
    const raw = [
      "Host",
      "a.test",
      "Connection",
      "keep-alive, Upgrade, HTTP2-Settings",
      "Upgrade",
      "h2c",
      "HTTP2-Settings",
      "AAMAAABkAAQCAAAAAAIAAAAA",
      "Content-Length",
      "5",
      "X-Other",
      "kept",
    ];
    assert.equal(
      headWithoutH2cUpgrade("POST /a?b HTTP/1.1", raw),
      "POST /a?b HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive\r\nContent-Length: 5\r\nX-Other: kept\r\n\r\n",
    );
    const only = ["host", "a.test", "connection", "Upgrade,HTTP2-Settings", "upgrade", "h2c"];
    assert.equal(
      headWithoutH2cUpgrade("GET / HTTP/1.1", only),
      "GET / HTTP/1.1\r\nhost: a.test\r\n\r\n",
    );
  });
});

/** Writes `bytes` on a new connection to the port and reads until the server closes it. */
function exchangeRaw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}

/** An h2c session with prior knowledge, ready once the server's SETTINGS came. */
function openH2c(port: number, socket?: Socket): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connectH2(
      `http://127.0.0.1:${port}`,
      socket === undefined ? {} : { createConnection: () => socket },
    );
    session.once("remoteSettings", () => {
      session.off("error", reject);
      resolve(session);
    });
    session.once("error", reject);
  });
}

/** The echo backend's view of a request (namedBackend). */
interface Echo {
  name: string;
  url: string;
  body: string;
  headers: Record<string, string | undefined>;
}

/** The echoes in an HTTP/1.1 answer stream (one per 200 answer, JSON bodies). */
function echoesIn(text: string): Echo[] {
  return [...text.matchAll(/\{"name".*?"body":"[^"]*"\}/g)].map(m => JSON.parse(m[0]) as Echo);
}

function assertNoUpgradeUpstream(echo: Echo): void {
  assert.equal(echo.headers.upgrade, undefined);
  assert.equal(echo.headers["http2-settings"], undefined);
  assert.doesNotMatch(echo.headers.connection ?? "", /upgrade|http2-settings/i);
}

/** A data plane serving shop.test from an echo backend, with these front-door settings. */
async function shopPlane(main: Backend, frontDoor: Partial<FrontDoorLimits>, logPath?: string) {
  const plane = await startDataPlane({
    httpPort: 0,
    httpsPort: 0,
    host: "127.0.0.1",
    observe: { metrics: true, accessLog: logPath !== undefined, accessLogPath: logPath },
    frontDoor: { ...DEFAULT_FRONT_DOOR, ...frontDoor },
  });
  await plane.apply(hostsView("main", main.port, { shop: {} }));
  return plane;
}

describe("data plane: h2c off (the default)", () => {
  let main: Backend;
  let plane: DataPlane;

  before(async () => {
    main = await namedBackend("main");
    plane = await shopPlane(main, {});
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  it("refuses the client preface as the front door always did (400: PRI is no HTTP/1.1 method), and closes", async () => {
    const answer = await exchangeRaw(
      plane.httpPort,
      Buffer.concat([CLIENT_PREFACE, frame(FRAME.SETTINGS, 0, 0)]),
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.equal(plane.status().counters.refused["unknown-method"], 1);
  });

  it("an h2c client with prior knowledge gets no HTTP/2 session", async () => {
    await assert.rejects(openH2c(plane.httpPort));
  });

  it("Upgrade: h2c is ignored: answered as HTTP/1.1, nothing of the upgrade goes upstream", async () => {
    const answer = await exchangeRaw(
      plane.httpPort,
      ["GET /up HTTP/1.1", "Host: shop.test", ...UPGRADE_FIELDS, "Connection: close", "", ""].join(
        "\r\n",
      ),
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(answer, /101 Switching/);
    const [echo] = echoesIn(answer);
    assert.equal(echo?.url, "/up");
    assertNoUpgradeUpstream(echo!);
  });
});

describe("data plane: h2c on (BULWARK_HTTP2_CLEARTEXT)", () => {
  let main: Backend;
  let plane: DataPlane;
  /** The counting backend's requests (rapid reset). */
  let counted = 0;
  let counting: Backend;
  const logPath = join(mkdtempSync(join(tmpdir(), "h2c-")), "access.log");

  before(async () => {
    main = await namedBackend("main");
    counting = await startBackend((_req, res) => {
      counted++;
      setTimeout(() => res.end("counted"), 20);
    });
    plane = await shopPlane(main, { http2Cleartext: true, headTimeoutMs: 1000 }, logPath);
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await Promise.all([main.close(), counting.close()]);
  });

  it("serves an h2c client with prior knowledge through the same routes, X-Forwarded-Proto http", async () => {
    const session = await openH2c(plane.httpPort);
    try {
      const answer = await askOn(session, "shop.test", "/h2c?x=1");
      assert.equal(answer.status, 200);
      const echo = JSON.parse(answer.body) as Echo;
      assert.deepEqual([echo.name, echo.url], ["main", "/h2c?x=1"]);
      assert.equal(echo.headers["x-forwarded-proto"], "http");
      assert.equal(echo.headers.host, "shop.test");
      const missing = await askOn(session, "nobody.test", "/");
      assert.equal(missing.status, 404);
    } finally {
      session.close();
    }
  });

  it("announces the same limits as on the HTTPS listener", async () => {
    const session = await openH2c(plane.httpPort);
    try {
      const settings = session.remoteSettings;
      assert.equal(settings.maxConcurrentStreams, MAX_CONCURRENT_STREAMS);
      assert.equal(settings.maxHeaderListSize, DEFAULT_FRONT_DOOR.maxHeadBytes);
      assert.equal(settings.headerTableSize, 4096);
      assert.equal(settings.enablePush, false);
    } finally {
      session.close();
    }
  });

  it("recognizes the preface sent one byte at a time", async () => {
    const socket = await rawH2c(plane.httpPort);
    const seen = readFrames(socket);
    for (const byte of CLIENT_PREFACE) {
      socket.write(Buffer.from([byte]));
      await new Promise(resolve => setTimeout(resolve, 2));
    }
    socket.write(
      Buffer.concat([
        frame(FRAME.SETTINGS, 0, 0),
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, getHeaderBlock("shop.test")),
      ]),
    );
    await waitUntil("the answer's HEADERS", () =>
      seen.frames.some(f => f.type === FRAME.HEADERS && f.streamId === 1),
    );
    socket.destroy();
  });

  it("serves HTTP/1.1 connections on the HTTP/1.1 path, byte for byte as with h2c off", async () => {
    const answer = await exchangeRaw(
      plane.httpPort,
      "GET /plain HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n",
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.equal(echoesIn(answer)[0]?.headers["x-forwarded-proto"], "http");
  });

  it("a request line that only starts like the preface goes to the front door, which refuses it (400)", async () => {
    const before = plane.status().counters.refused["unknown-method"] ?? 0;
    for (const text of ["PRI * HTTP/2.0\r\n\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nSM\r\nXX\r\n\r\n"]) {
      assert.match(await exchangeRaw(plane.httpPort, text), /^HTTP\/1\.1 400 /, text);
    }
    assert.equal(plane.status().counters.refused["unknown-method"], before + 2);
  });

  it("a client that sends part of the preface and stalls is answered 408 by the HTTP/1.1 path", async () => {
    const answer = await exchangeRaw(plane.httpPort, CLIENT_PREFACE.subarray(0, 16));
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it("writes the access log's protocol HTTP/2.0 with scheme http, and counts the protocol", async () => {
    const session = await openH2c(plane.httpPort);
    await askOn(session, "shop.test", "/logged-h2c");
    session.close();
    const line = () =>
      existsSync(logPath)
        ? readFileSync(logPath, "utf8")
            .split("\n")
            .filter(l => l.includes("/logged-h2c"))
            .map(l => JSON.parse(l) as Record<string, unknown>)[0]
        : undefined;
    await waitUntil("the access log line", () => line() !== undefined);
    assert.deepEqual([line()!.protocol, line()!.scheme, line()!.status], ["HTTP/2.0", "http", 200]);
    const requests = (await plane.trafficMetrics())
      .flat()
      .find(m => m.name === "bulwark_gateway_requests_total");
    assert.ok(
      requests?.values.some(v => v.labels.host === "shop.test" && v.labels.protocol === "HTTP/2.0"),
    );
  });

  it("Upgrade: h2c is still ignored with h2c on: HTTP/1.1 answers, the body and the next request on the connection intact", async () => {
    const first = [
      "POST /first HTTP/1.1",
      "Host: shop.test",
      ...UPGRADE_FIELDS,
      "Content-Length: 5",
      "",
      "hello",
    ].join("\r\n");
    const second = "GET /second HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n";
    const answer = await exchangeRaw(plane.httpPort, first + second);
    assert.equal(answer.match(/HTTP\/1\.1 200 /g)?.length, 2, answer);
    assert.doesNotMatch(answer, /101 Switching/);
    const [one, two] = echoesIn(answer);
    assert.deepEqual([one?.url, one?.body, two?.url], ["/first", "hello", "/second"]);
    assertNoUpgradeUpstream(one!);
  });

  it("rapid reset on h2c, sent in one go with the preface: streams reset on arrival count, the connection is closed", async () => {
    const count = ingress({
      name: "count",
      rules: [{ host: "count.test", paths: [{ path: "/", service: "counting" }] }],
    });
    const shop = hostsView("main", main.port, { shop: {} });
    await plane.apply(
      view(
        2,
        [...shop.ingresses, count],
        [loopback("main", main.port), loopback("counting", counting.port)],
      ),
    );
    const socket = await rawH2c(plane.httpPort);
    const seen = readFrames(socket);
    socket.write(Buffer.concat([CLIENT_PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
    const cancel = Buffer.from([0, 0, 0, constants.NGHTTP2_CANCEL]);
    for (let i = 0; i < 2000 && !socket.destroyed && socket.writable; i++) {
      const id = 1 + 2 * i;
      const pair = Buffer.concat([
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, id, getHeaderBlock("count.test")),
        frame(FRAME.RST_STREAM, 0, id, cancel),
      ]);
      if (!socket.write(pair)) await new Promise(resolve => socket.once("drain", resolve));
    }
    await seen.closed;
    // Torn down from inside nghttp2's reading of the first bytes: a GOAWAY, when one gets out,
    // says ENHANCE_YOUR_CALM or nghttp2's own INTERNAL_ERROR.
    const goaways = seen.frames
      .filter(f => f.type === FRAME.GOAWAY)
      .map(f => f.payload.readUInt32BE(4));
    assert.ok(
      goaways.every(code =>
        [constants.NGHTTP2_ENHANCE_YOUR_CALM, constants.NGHTTP2_INTERNAL_ERROR].includes(code),
      ),
      String(goaways),
    );
    assert.ok(counted <= 2 * MAX_CONCURRENT_STREAMS + 1, `${counted} upstream requests`);
    assert.equal(plane.status().counters.refused["h2-rapid-reset"], 1);
  });
});

describe("data plane: h2c on, HTTP/2 on the HTTPS listener off", () => {
  let main: Backend;
  let plane: DataPlane;

  before(async () => {
    main = await namedBackend("main");
    plane = await shopPlane(main, { http2: false, http2Cleartext: true });
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  it("each setting rules its own listener: h2c is served, the HTTPS listener offers http/1.1 only", async () => {
    assert.equal(await negotiated(plane.httpsPort!, "shop.test", ["h2", "http/1.1"]), "http/1.1");
    const session = await openH2c(plane.httpPort);
    try {
      assert.equal((await askOn(session, "shop.test", "/both")).status, 200);
    } finally {
      session.close();
    }
  });
});

describe("data plane: h2c behind the PROXY protocol", () => {
  let main: Backend;
  let plane: DataPlane;

  before(async () => {
    main = await namedBackend("main");
    plane = await shopPlane(main, { http2Cleartext: true, proxyProtocol: true });
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  it("reads the PROXY header first; the preface after it opens h2c with the header's client", async () => {
    const socket = connect(plane.httpPort, "127.0.0.1");
    socket.write("PROXY TCP4 203.0.113.7 10.0.0.1 56324 80\r\n");
    const session = await openH2c(plane.httpPort, socket);
    try {
      const answer = await askOn(session, "shop.test", "/proxied");
      const echo = JSON.parse(answer.body) as Echo;
      assert.equal(echo.headers["x-real-ip"], "203.0.113.7");
    } finally {
      session.close();
    }
  });
});

describe("data plane: h2c with curl and nghttp", () => {
  let main: Backend;
  let plane: DataPlane;

  before(async () => {
    main = await namedBackend("main");
    plane = await shopPlane(main, { http2Cleartext: true });
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  /** curl on the HTTP port with `mode`; the protocol version, the status and the body. */
  async function curl(mode: string, path: string) {
    const { stdout } = await run("curl", [
      mode,
      "-s",
      "--max-time",
      "10",
      "-H",
      "Host: shop.test",
      "-w",
      "\n%{http_version} %{http_code}",
      `http://127.0.0.1:${plane.httpPort}${path}`,
    ]);
    const cut = stdout.lastIndexOf("\n");
    const [version, status] = stdout.slice(cut + 1).split(" ");
    return { version, status: Number(status), echo: JSON.parse(stdout.slice(0, cut)) as Echo };
  }

  it("curl --http2-prior-knowledge speaks HTTP/2 and is routed", async () => {
    const answer = await curl("--http2-prior-knowledge", "/prior");
    assert.deepEqual([answer.version, answer.status, answer.echo.url], ["2", 200, "/prior"]);
  });

  it("curl --http2 on http:// (Upgrade: h2c) gets an HTTP/1.1 answer; the upgrade never goes upstream", async () => {
    const answer = await curl("--http2", "/upgrade");
    assert.deepEqual([answer.version, answer.status, answer.echo.url], ["1.1", 200, "/upgrade"]);
    assertNoUpgradeUpstream(answer.echo);
  });

  it("nghttp (h2c prior knowledge): 30 streams on one connection, each answered 200", async () => {
    const { stdout } = await run("nghttp", [
      "-nv",
      "-m",
      "30",
      "-H",
      ":authority: shop.test",
      `http://127.0.0.1:${plane.httpPort}/many`,
    ]);
    const statuses = stdout.split("\n").filter(l => /recv \(stream_id=\d+\) :status: /.test(l));
    assert.equal(statuses.length, 30);
    assert.ok(
      statuses.every(l => l.endsWith(":status: 200")),
      statuses.join("\n"),
    );
    assert.match(stdout, /SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):128/);
  });

  it("nghttp -u (Upgrade: h2c) is answered in HTTP/1.1, never switched", async () => {
    // nghttp's upgrade request names the URL's authority as Host (no route there: 404).
    const result = await run("nghttp", ["-uv", `http://127.0.0.1:${plane.httpPort}/u`]).catch(
      (error: { stdout: string }) => error,
    );
    assert.match(result.stdout, /HTTP Upgrade response\nHTTP\/1\.1 404 Not Found/);
    assert.doesNotMatch(result.stdout, /101 Switching/);
  });
});
