// An HTTP/1.1 upstream's chunked trailers reach an HTTP/2 client that said `TE: trailers`, as a
// trailing HEADERS frame with only the fields a trailer may carry. The upstream is a raw socket
// writing its answer byte for byte; the client is node:http2.
import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http2";
import { createServer, type AddressInfo, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { hostsView } from "../testkit";
import { openSession } from "./testkit";
import { acceptsTrailers, relayableTrailers } from "./trailers";

describe("relayableTrailers", () => {
  it("keeps ordinary fields, lower-cased, repeated ones gathered in order", () => {
    assert.deepEqual(
      relayableTrailers(["X-Checksum", "abc", "X-Multi", "1", "grpc-status", "0", "x-multi", "2"]),
      { "x-checksum": "abc", "x-multi": ["1", "2"], "grpc-status": "0" },
    );
  });
  it("drops connection-specific fields and those a trailer must not carry", () => {
    const forbidden = [
      "Connection",
      "Keep-Alive",
      "Proxy-Connection",
      "Transfer-Encoding",
      "Upgrade",
      "TE",
      "Trailer",
      "Content-Length",
      "Content-Type",
      "Content-Encoding",
      "Host",
      "Set-Cookie",
      "WWW-Authenticate",
      "Authorization",
      "Cache-Control",
      "Location",
      "Date",
    ];
    const raw = forbidden.flatMap(name => [name, "x"]);
    assert.deepEqual(relayableTrailers([...raw, ":status", "200", "", "empty"]), {});
  });
  it("acceptsTrailers: only TE trailers", () => {
    assert.equal(acceptsTrailers("trailers"), true);
    assert.equal(acceptsTrailers(" Trailers "), true);
    for (const te of [undefined, "", "gzip", "trailers, gzip", ["trailers"]]) {
      assert.equal(acceptsTrailers(te), false, String(te));
    }
  });
});

/** The answers the raw backend writes, by request path. */
const ANSWERS: Record<string, string> = {
  "/trailers": [
    "HTTP/1.1 200 OK",
    "Content-Type: text/plain",
    "Transfer-Encoding: chunked",
    "Trailer: X-Checksum, X-Multi",
    "",
    "5",
    "hello",
    "0",
    "X-Checksum: sha256=abc",
    "X-Multi: 1",
    "X-Multi: 2",
    "Set-Cookie: stolen=1",
    "Cache-Control: no-store",
    "Keep-Alive: timeout=5",
    "Trailer: X-Checksum",
    "",
    "",
  ].join("\r\n"),
  "/forbidden-only": [
    "HTTP/1.1 200 OK",
    "Transfer-Encoding: chunked",
    "",
    "2",
    "ok",
    "0",
    "Set-Cookie: stolen=1",
    "Location: https://elsewhere.example/",
    "",
    "",
  ].join("\r\n"),
  "/none": ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", "", "2", "ok", "0", "", ""].join(
    "\r\n",
  ),
};

/** A backend on a raw socket: answers each request head with ANSWERS[path], records the heads. */
async function rawBackend(heads: string[]): Promise<{ server: Server; port: number }> {
  const server = createServer(socket => {
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      for (let end = buffered.indexOf("\r\n\r\n"); end >= 0; end = buffered.indexOf("\r\n\r\n")) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        heads.push(head);
        const path = head.split(" ")[1] ?? "";
        socket.write(ANSWERS[path.split("?")[0]!] ?? "HTTP/1.1 404 Not Found\r\n\r\n");
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

interface Answered {
  status: number;
  body: string;
  /** The trailing HEADERS frame's fields; undefined when none came. */
  trailers: IncomingHttpHeaders | undefined;
}

describe("data plane: HTTP/1.1 upstream trailers to HTTP/2 clients", () => {
  const heads: string[] = [];
  let backend: { server: Server; port: number };
  let plane: DataPlane;

  before(async () => {
    backend = await rawBackend(heads);
    plane = await startDataPlane({ httpPort: 0, httpsPort: 0, host: "127.0.0.1" });
    await plane.apply(hostsView("raw", backend.port, { shop: {} }));
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await new Promise(resolve => backend.server.close(resolve));
  });

  /** One h2 request for `path`, with `te: trailers` when `te`; the status, body and trailers. */
  async function ask(path: string, te: boolean): Promise<Answered> {
    const session = await openSession(plane.httpsPort!, "shop.test");
    try {
      return await new Promise((resolve, reject) => {
        const stream = session.request({
          ":path": path,
          ":authority": "shop.test",
          ...(te ? { te: "trailers" } : {}),
        });
        let status = 0;
        let body = "";
        let trailers: IncomingHttpHeaders | undefined;
        stream.on("response", headers => (status = Number(headers[":status"])));
        stream.on("trailers", headers => (trailers = headers));
        stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
        stream.on("end", () => resolve({ status, body, trailers }));
        stream.on("error", reject);
      });
    } finally {
      session.close();
    }
  }

  /** The last request head the backend got for `path`. */
  const headFor = (path: string) => heads.filter(h => h.startsWith(`GET ${path} `)).at(-1) ?? "";

  it("relays the upstream's trailers to a client that said TE: trailers, the allowed fields only", async () => {
    const answer = await ask("/trailers?a", true);
    assert.deepEqual([answer.status, answer.body], [200, "hello"]);
    assert.deepEqual(
      Object.fromEntries(Object.entries(answer.trailers ?? {})),
      { "x-checksum": "sha256=abc", "x-multi": "1, 2" },
      "Set-Cookie, Cache-Control, Keep-Alive and Trailer stay behind",
    );
    // TE is connection-specific: the gateway's own request upstream says nothing of it.
    assert.doesNotMatch(headFor("/trailers?a"), /\r\nTE:/i);
  });

  it("sends no trailers when the client did not say TE: trailers", async () => {
    const answer = await ask("/trailers?b", false);
    assert.deepEqual([answer.status, answer.body, answer.trailers], [200, "hello", undefined]);
    assert.doesNotMatch(headFor("/trailers?b"), /\r\nTE:/i);
  });

  it("sends no trailing HEADERS when nothing in the upstream's trailers may be relayed", async () => {
    const answer = await ask("/forbidden-only", true);
    assert.deepEqual([answer.status, answer.body, answer.trailers], [200, "ok", undefined]);
  });

  it("sends no trailing HEADERS when the upstream sent no trailers", async () => {
    const answer = await ask("/none", true);
    assert.deepEqual([answer.status, answer.body, answer.trailers], [200, "ok", undefined]);
  });
});
