// The front-door findings, each as the attack that worked before, over real sockets: the gateway in
// front of a *lenient* origin (one that, like Go's, Python's or nginx's, takes a bare LF for a line
// end and reads whatever framing it is given), so anything the gateway lets through shows up as an
// extra request at the origin or a wrong answer to another client.
import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { DEFAULT_FRONT_DOOR } from "./request-rules";
import { waitUntil } from "../../test/harness/wait";

const P = "nginx.ingress.kubernetes.io/";

interface LenientOrigin {
  port: number;
  server: Server;
  /** Every request line the origin read, in order ("GET /x"). */
  seen: string[];
  /** Raw bytes per connection. */
  raw: string[];
}

/**
 * An origin that splits requests on LF or CRLF, honours Transfer-Encoding: chunked (last wins) or
 * Content-Length, and answers each request with its request line as the body. `early` paths are
 * answered as soon as the head arrives, before the body.
 */
async function lenientOrigin(early: string[] = []): Promise<LenientOrigin> {
  const origin: LenientOrigin = { port: 0, server: createServer(), seen: [], raw: [] };
  origin.server.on("connection", (socket: Socket) => {
    const index = origin.raw.push("") - 1;
    let buffered = "";
    socket.on("data", (data: Buffer) => {
      origin.raw[index] += data.toString("latin1");
      buffered += data.toString("latin1");
      for (;;) {
        const end = /\r?\n\r?\n/.exec(buffered);
        if (end === null) return;
        const head = buffered.slice(0, end.index);
        const line = head.split(/\r?\n/)[0]!;
        const path = line.split(" ")[1] ?? "";
        const chunked = /transfer-encoding:\s*chunked/i.test(head);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        let rest = buffered.slice(end.index + end[0].length);
        if (early.includes(path)) {
          origin.seen.push(line.split(" ").slice(0, 2).join(" "));
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${line.length}\r\n\r\n${line}`);
          buffered = "";
          return;
        }
        if (chunked) {
          const last = rest.indexOf("0\r\n\r\n");
          if (last < 0) return;
          rest = rest.slice(last + 5);
        } else {
          if (rest.length < length) return;
          rest = rest.slice(length);
        }
        buffered = rest;
        origin.seen.push(line.split(" ").slice(0, 2).join(" "));
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${line.length}\r\n\r\n${line}`);
      }
    });
  });
  await new Promise<void>(resolve => origin.server.listen(0, "127.0.0.1", resolve));
  origin.port = (origin.server.address() as AddressInfo).port;
  return origin;
}

/** Writes `text` (in `pieces`, `gapMs` apart) and reads until the server closes or `done`. */
/** One whole answer has come (its head, and its Content-Length's worth of body). */
function answered(received: string): boolean {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
  return received.length >= end + 4 + length;
}

function talk(
  port: number,
  text: string | string[],
  { done = answered, gapMs = 0 }: { done?: (received: string) => boolean; gapMs?: number } = {},
): Promise<{ text: string; closed: boolean; ms: number }> {
  const started = performance.now();
  return new Promise(resolve => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ text: received, closed, ms: performance.now() - started });
    };
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1");
      // A refused request's connection closes right after the answer: give it the time to.
      if (done(received)) setTimeout(() => finish(false), 100);
    });
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    const pieces = typeof text === "string" ? [text] : text;
    let i = 0;
    const next = () => {
      if (finished || i >= pieces.length) return;
      socket.write(pieces[i++]!, "latin1");
      setTimeout(next, gapMs);
    };
    next();
  });
}

const answers = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

describe("the front door over real sockets", () => {
  let origin: LenientOrigin;
  let plane: DataPlane;

  before(async () => {
    origin = await lenientOrigin(["/early"]);
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      defaultCertificates: [],
      frontDoor: { ...DEFAULT_FRONT_DOOR, headTimeoutMs: 600, bodyTimeoutMs: 600 },
    });
    const slice = endpointSlice({
      service: "origin",
      ports: [{ port: origin.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "public",
            rules: [
              {
                host: "a.test",
                paths: [
                  { path: "/public", service: "origin" },
                  { path: "/early", service: "origin" },
                ],
              },
            ],
          }),
          ingress({
            name: "internal",
            rules: [{ host: "internal.test", paths: [{ path: "/", service: "origin" }] }],
          }),
          ingress({
            name: "redos",
            annotations: {
              [`${P}canary`]: "true",
              [`${P}canary-by-header`]: "X-User",
              [`${P}canary-by-header-pattern`]: "^(a+)+$",
            },
            rules: [{ host: "a.test", paths: [{ path: "/public", service: "origin" }] }],
          }),
        ],
        [slice],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 100 });
    origin.server.close();
  });

  /** What the origin read while `run` ran. */
  async function seenDuring(run: () => Promise<unknown>): Promise<string[]> {
    const before = origin.seen.length;
    await run();
    // What is checked is that nothing MORE reaches the origin (a smuggled request): that needs a
    // quiet moment after the answers, kept short.
    await new Promise(resolve => setTimeout(resolve, 30));
    return origin.seen.slice(before);
  }

  it("refuses a bare LF in a value: no second request reaches the origin, another client's answer is its own", async () => {
    const seen = await seenDuring(async () => {
      const attack = await talk(
        plane.httpPort,
        "GET /public HTTP/1.1\r\nHost: a.test\r\nX-A: 1\n\nGET /smuggled HTTP/1.1\r\nHost: internal.test\r\n\r\n",
      );
      assert.equal(statusOf(attack.text), 400);
      assert.equal(attack.closed, true);
      const victim = await talk(
        plane.httpPort,
        "GET /public/victim HTTP/1.1\r\nHost: a.test\r\n\r\n",
      );
      assert.match(victim.text, /GET \/public\/victim HTTP\/1\.1$/);
    });
    assert.deepEqual(seen, ["GET /public/victim"]);
  });

  it("refuses Transfer-Encoding or X-Real-IP hidden after a bare LF", async () => {
    for (const hidden of ["Transfer-Encoding: chunked", "X-Real-IP: 10.0.0.1"]) {
      const seen = await seenDuring(async () => {
        const answer = await talk(
          plane.httpPort,
          `POST /public HTTP/1.1\r\nHost: a.test\r\nX-A: 1\n${hidden}\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
        );
        assert.equal(statusOf(answer.text), 400, hidden);
      });
      assert.deepEqual(seen, [], hidden);
    }
  });

  it("frames a chunked GET body on Node's path too: the origin reads one request", async () => {
    const seen = await seenDuring(async () => {
      const answer = await talk(
        plane.httpPort,
        "GET /public/x HTTP/1.1\r\nHost: a.test\r\nConnection: x-node\r\nX-Node: 1\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\nGET /smuggled HTTP/1.1\r\n\r\n\r\n0\r\n\r\n",
      );
      assert.equal(statusOf(answer.text), 200);
    });
    assert.deepEqual(seen, ["GET /public/x"]);
    const raw = origin.raw.join("");
    assert.match(raw, /GET \/public\/x HTTP\/1\.1\r\n[^]*Transfer-Encoding: chunked\r\n/);
  });

  it("closes the client connection when the origin answers before the body: the rest is never a request", async () => {
    const seen = await seenDuring(async () => {
      const smuggled = "GET /public/smuggled HTTP/1.1\r\nHost: internal.test\r\n\r\n";
      // The head first; the body only once the origin has answered.
      const answer = await talk(
        plane.httpPort,
        [
          `POST /early HTTP/1.1\r\nHost: a.test\r\nContent-Length: ${smuggled.length}\r\n\r\n`,
          smuggled,
        ],
        { gapMs: 200 },
      );
      assert.equal(answers(answer.text).length, 1);
      assert.match(answer.text, /Connection: close/);
      assert.equal(answer.closed, true);
    });
    assert.deepEqual(seen, ["POST /early"]);
  });

  it("answers 408 to a head that trickles in past the head deadline", async () => {
    const bytes = [..."GET /public HTTP/1.1\r\nHost: a.test\r\nX-Slow: 1234567890\r\n\r\n"];
    const answer = await talk(plane.httpPort, bytes, { gapMs: 50 });
    assert.equal(statusOf(answer.text), 408);
    assert.equal(answer.closed, true);
    // The deadline counts from the head's first byte, not from the last one.
    assert.ok(answer.ms < bytes.length * 50, `${answer.ms} ms`);
  });

  it("answers 408 to a body that stops arriving", async () => {
    const answer = await talk(
      plane.httpPort,
      "POST /public HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\nabc",
    );
    assert.equal(statusOf(answer.text), 408);
    assert.equal(answer.closed, true);
  });

  it("times the body between reads, not as a whole: one arriving steadily for longer is served", async () => {
    const pieces = Array.from({ length: 8 }, () => "0123456789");
    const answer = await talk(
      plane.httpPort,
      [`POST /public HTTP/1.1\r\nHost: a.test\r\nContent-Length: 80\r\n\r\n`, ...pieces],
      { gapMs: 200 },
    );
    assert.equal(statusOf(answer.text), 200);
    // Longer in all than the 600 ms body timeout, each gap a third of it.
    assert.ok(answer.ms > 1500, `${answer.ms} ms`);
  });

  it("limits the whole head whether or not its blank line came: 414 for a long target, 431 for many fields", async () => {
    const long = await talk(
      plane.httpPort,
      `GET /public/${"a".repeat(100_000)} HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    );
    assert.equal(statusOf(long.text), 431);
    const target = await talk(
      plane.httpPort,
      `GET /public/${"a".repeat(9000)} HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    );
    assert.equal(statusOf(target.text), 414);
    const fields = Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${"v".repeat(20)}`).join(
      "\r\n",
    );
    const many = await talk(
      plane.httpPort,
      `GET /public HTTP/1.1\r\nHost: a.test\r\n${fields}\r\n\r\n`,
    );
    assert.equal(statusOf(many.text), 431);
    // The same head in one-byte pieces costs linear time: answered, not stalled.
    const unfinished = `GET /public HTTP/1.1\r\nHost: a.test\r\n${"X: y\r\n".repeat(12_000)}`;
    const pieces = unfinished.match(/[^]{1,1000}/g)!;
    const trickled = await talk(plane.httpPort, pieces);
    assert.equal(statusOf(trickled.text), 431);
  });

  it("routes an absolute-form target on its authority and sends origin-form", async () => {
    const seen = await seenDuring(async () => {
      const answer = await talk(
        plane.httpPort,
        "GET http://internal.test/admin HTTP/1.1\r\nHost: a.test\r\n\r\n",
      );
      assert.equal(statusOf(answer.text), 200);
    });
    assert.deepEqual(seen, ["GET /admin"]);
    // Routed on the authority: a.test exposes only /public, so its Host cannot reach /admin there.
    const denied = await talk(
      plane.httpPort,
      "GET http://a.test/admin HTTP/1.1\r\nHost: internal.test\r\n\r\n",
    );
    assert.equal(statusOf(denied.text), 404);
  });

  it("normalizes the path before routing: /public/../admin and its encoded forms never reach /admin", async () => {
    const seen = await seenDuring(async () => {
      for (const path of [
        "/public/../admin",
        "/public/%2e%2e/admin",
        "/public/%2E%2e/admin",
        "/public/./../admin",
      ]) {
        const answer = await talk(plane.httpPort, `GET ${path} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
        assert.equal(statusOf(answer.text), 404, path);
      }
      for (const path of ["/public/%2f../admin", "/../admin", "/public/..%5cadmin"]) {
        const answer = await talk(plane.httpPort, `GET ${path} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
        assert.equal(statusOf(answer.text), 400, path);
      }
      const inside = await talk(
        plane.httpPort,
        "GET /public/x/../%7Ey HTTP/1.1\r\nHost: a.test\r\n\r\n",
      );
      assert.match(inside.text, /GET \/public\/~y HTTP\/1\.1$/);
    });
    assert.deepEqual(seen, ["GET /public/~y"]);
  });

  it("validates Host: userinfo, two Host fields, none at all are 400", async () => {
    for (const head of [
      "Host: a.test:80@evil.com",
      "Host: a.test\r\nHost: internal.test",
      "Accept: */*",
      "Host: ",
    ]) {
      const answer = await talk(plane.httpPort, `GET /public HTTP/1.1\r\n${head}\r\n\r\n`);
      assert.equal(statusOf(answer.text), 400, head);
      assert.equal(answer.closed, true, head);
    }
  });

  it("drops underscore names, and Connection never strips Host or the forwarded fields (both paths)", async () => {
    const before = origin.raw.map(bytes => bytes.length);
    for (const extra of ["", "Connection: x-node\r\nX-Node: 1\r\n"]) {
      const answer = await talk(
        plane.httpPort,
        `GET /public/h HTTP/1.1\r\nHost: a.test\r\n${extra}Connection: Host, X-Forwarded-For, X-Real-IP\r\nX_Real_IP: 6.6.6.6\r\n\r\n`,
      );
      assert.equal(statusOf(answer.text), 200, extra);
    }
    const headsAtOrigin = () =>
      origin.raw
        .map((bytes, i) => bytes.slice(before[i] ?? 0))
        .join("")
        .split("GET /public/h HTTP/1.1\r\n")
        .slice(1);
    const heads = await waitUntil("both requests at the origin", () => {
      const seen = headsAtOrigin();
      return seen.length >= 2 && seen;
    });
    assert.equal(heads.length, 2);
    for (const head of heads) {
      assert.match(head, /^Host: a\.test\r\n/m);
      assert.match(head, /X-Forwarded-For: 127\.0\.0\.1\r\n/);
      assert.match(head, /X-Real-IP: 127\.0\.0\.1\r\n/);
      assert.doesNotMatch(head, /X_Real_IP/);
    }
  });

  it("answers the ReDoS attack on canary-by-header-pattern in milliseconds, and another host is not held up", async () => {
    const attack = talk(
      plane.httpPort,
      `GET /public/r HTTP/1.1\r\nHost: a.test\r\nX-User: ${"a".repeat(27)}!\r\n\r\n`,
    );
    const other = talk(plane.httpPort, "GET /o HTTP/1.1\r\nHost: internal.test\r\n\r\n");
    const [a, o] = await Promise.all([attack, other]);
    assert.equal(statusOf(a.text), 200);
    assert.equal(statusOf(o.text), 200);
    // V8's backtracking took 4.2 s for this header; the bound is generous for a loaded machine.
    assert.ok(a.ms < 1000 && o.ms < 1000, `${a.ms} / ${o.ms} ms`);
  });

  it("counts refusals by reason", async () => {
    await talk(plane.httpPort, "GET / HTTP/1.1\nHost: a.test\n\n");
    const metrics = (await plane.trafficMetrics()).flat();
    const refused = metrics.find(m => m.name === "bulwark_gateway_requests_refused_total");
    const bareLf = refused?.values.find(v => v.labels.reason === "bare-line-feed");
    assert.ok(bareLf !== undefined && bareLf.value >= 1, JSON.stringify(refused));
    assert.ok((plane.status().counters.refused["bare-line-feed"] ?? 0) >= 1);
  });
});

describe("the front door: upstream answers that cannot be passed on", () => {
  let plane: DataPlane;
  let server: Server;

  before(async () => {
    server = createServer(socket => {
      socket.on("data", (data: Buffer) => {
        const path = data.toString("latin1").split(" ")[1];
        if (path === "/te-space")
          socket.write(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc",
          );
        else if (path === "/bare-lf") socket.write("HTTP/1.1 200 OK\nContent-Length: 3\n\nabc");
        else if (path === "/both")
          socket.write(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
          );
        else if (path === "/bad-chunk")
          socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n");
        else
          socket.write(
            "HTTP/1.1 200 OK\r\nConnection: X-Secret\r\nX-Secret: 1\r\nContent-Length: 2\r\n\r\nok",
          );
      });
    });
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
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
        [
          endpointSlice({
            service: "raw",
            ports: [{ port: (server.address() as AddressInfo).port }],
            endpoints: [{ address: "127.0.0.1" }],
          }),
        ],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 100 });
    server.close();
  });

  for (const path of ["/te-space", "/bare-lf", "/both", "/bad-chunk"]) {
    it(`answers 502 to ${path} and passes none of it on`, async () => {
      const answer = await talk(plane.httpPort, `GET ${path} HTTP/1.1\r\nHost: raw.test\r\n\r\n`);
      assert.equal(statusOf(answer.text), 502);
      assert.doesNotMatch(answer.text, /abc|Transfer-Encoding/);
    });
  }

  it("removes the fields the upstream's Connection names on the fast path", async () => {
    const answer = await talk(plane.httpPort, "GET /ok HTTP/1.1\r\nHost: raw.test\r\n\r\n");
    assert.equal(statusOf(answer.text), 200);
    assert.doesNotMatch(answer.text, /X-Secret/i);
  });
});
