// The PROXY protocol header parser (HAProxy's specification, versions 1 and 2) and the listeners
// that require it: real sockets on the HTTP and HTTPS listeners, the header's source standing for
// the peer in source ranges and X-Real-IP.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { DEFAULT_FRONT_DOOR } from "./request-rules";
import { readProxyHeader } from "./proxy-protocol";
import { hostsView, namedBackend, type Backend } from "./testkit";

const SIGNATURE = Buffer.from("0d0a0d0a000d0a515549540a", "hex");

function v2(command: number, family: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head[0] = 0x20 | command;
  head[1] = family;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([SIGNATURE, head, body]);
}

const TCP4_BODY = Buffer.from([203, 0, 113, 7, 10, 0, 0, 1, 0x1f, 0x90, 0x01, 0xbb]);
const TCP6_BODY = Buffer.concat([
  Buffer.from("20010db8000000000000000000000042", "hex"),
  Buffer.from("20010db8000000000000000000000001", "hex"),
  Buffer.from([0x1f, 0x90, 0x01, 0xbb]),
]);

describe("readProxyHeader", () => {
  const complete = (text: string | Buffer) => readProxyHeader(Buffer.from(text));

  it("reads version 1 lines for TCP4, TCP6 and UNKNOWN", () => {
    assert.deepEqual(complete("PROXY TCP4 203.0.113.7 10.0.0.1 56324 443\r\nGET /"), {
      state: "complete",
      length: 43,
      source: "203.0.113.7",
    });
    assert.deepEqual(complete("PROXY TCP6 2001:db8::42 2001:db8::1 56324 443\r\n"), {
      state: "complete",
      length: 47,
      source: "2001:db8::42",
    });
    assert.deepEqual(complete("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), {
      state: "complete",
      length: 35,
      source: undefined,
    });
  });

  it("waits for more of a header that has not all come", () => {
    for (const partial of ["P", "PROXY", "PROXY TCP4 203.0.113.7", SIGNATURE.subarray(0, 5)]) {
      assert.deepEqual(complete(partial), { state: "incomplete" }, String(partial));
    }
    assert.deepEqual(complete(v2(1, 0x11, TCP4_BODY).subarray(0, 20)), { state: "incomplete" });
  });

  for (const [label, text] of [
    ["a plain HTTP request", "GET / HTTP/1.1\r\n"],
    ["lower case", "proxy TCP4 203.0.113.7 10.0.0.1 1 2\r\n"],
    ["a bad family", "PROXY TCP5 203.0.113.7 10.0.0.1 1 2\r\n"],
    ["an IPv4 address with a leading zero", "PROXY TCP4 203.0.113.07 10.0.0.1 1 2\r\n"],
    ["a port over 65535", "PROXY TCP4 203.0.113.7 10.0.0.1 65536 2\r\n"],
    ["a missing field", "PROXY TCP4 203.0.113.7 10.0.0.1 1\r\n"],
    ["two spaces", "PROXY TCP4  203.0.113.7 10.0.0.1 1 2\r\n"],
    ["a line over 107 bytes", `PROXY TCP6 ${"a".repeat(100)}`],
  ] as const) {
    it(`refuses ${label}`, () => assert.equal(complete(text).state, "invalid"));
  }

  it("reads version 2 PROXY commands for TCP over IPv4 and IPv6, skipping TLVs", () => {
    assert.deepEqual(readProxyHeader(v2(1, 0x11, TCP4_BODY)), {
      state: "complete",
      length: 28,
      source: "203.0.113.7",
    });
    const withTlv = Buffer.concat([TCP6_BODY, Buffer.from([0x04, 0x00, 0x02, 0xaa, 0xbb])]);
    assert.deepEqual(readProxyHeader(v2(1, 0x21, withTlv)), {
      state: "complete",
      length: 16 + 41,
      source: "2001:db8::42",
    });
  });

  it("keeps the peer for a LOCAL command (health checks) and for UNSPEC or UNIX families", () => {
    assert.deepEqual(readProxyHeader(v2(0, 0x11, TCP4_BODY)), {
      state: "complete",
      length: 28,
      source: undefined,
    });
    assert.equal(readProxyHeader(v2(1, 0x00, Buffer.alloc(0))).state, "complete");
    assert.equal(readProxyHeader(v2(1, 0x31, Buffer.alloc(216))).state, "complete");
  });

  it("refuses a wrong version, an unknown command, short addresses and an oversized header", () => {
    const wrongVersion = v2(1, 0x11, TCP4_BODY);
    wrongVersion[12] = 0x11;
    assert.equal(readProxyHeader(wrongVersion).state, "invalid");
    assert.equal(readProxyHeader(v2(2, 0x11, TCP4_BODY)).state, "invalid");
    assert.equal(readProxyHeader(v2(1, 0x21, TCP4_BODY)).state, "invalid");
    assert.equal(readProxyHeader(v2(1, 0x11, Buffer.alloc(2000))).state, "invalid");
  });
});

/** Sends `prefix` then a request on a new connection; the whole answer (the gateway closes). */
function exchange(socket: Socket, prefix: Buffer | string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    socket.write(prefix);
    socket.write(request);
  });
}

describe("listeners with BULWARK_PROXY_PROTOCOL", () => {
  let backend: Backend;
  let plane: DataPlane;

  before(async () => {
    backend = await namedBackend("main");
    plane = await startDataPlane({
      httpPort: 0,
      httpsPort: 0,
      host: "127.0.0.1",
      frontDoor: { ...DEFAULT_FRONT_DOOR, proxyProtocol: true, headTimeoutMs: 2000 },
    });
    await plane.apply(
      hostsView("main", backend.port, {
        open: {},
        office: { "nginx.ingress.kubernetes.io/allowlist-source-range": "203.0.113.0/24" },
      }),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  const request = (host: string, via = "") =>
    `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close${via}\r\n\r\n`;
  const NODE_PATH = ", x-via\r\nX-Via: node";
  const plain = () => connect({ port: plane.httpPort, host: "127.0.0.1" });

  for (const [label, via] of [
    ["fast path", ""],
    ["Node's path", NODE_PATH],
  ] as const) {
    it(`${label}: the v1 source is the client: X-Real-IP, and the allowlist lets it in`, async () => {
      const header = "PROXY TCP4 203.0.113.7 10.0.0.1 56324 80\r\n";
      const answer = await exchange(plain(), header, request("open.test", via));
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.match(answer, /"x-real-ip":"203\.0\.113\.7"/);
      assert.match(answer, /"x-forwarded-for":"203\.0\.113\.7"/);
      const office = await exchange(plain(), header, request("office.test", via));
      assert.match(office, /^HTTP\/1\.1 200 /);
    });

    it(`${label}: a v2 source outside the allowlist gets 403`, async () => {
      const header = v2(1, 0x21, TCP6_BODY);
      const answer = await exchange(plain(), header, request("office.test", via));
      assert.match(answer, /^HTTP\/1\.1 403 /);
    });
  }

  it("a LOCAL v2 command keeps the TCP peer (a balancer's health check)", async () => {
    const answer = await exchange(plain(), v2(0, 0x00, Buffer.alloc(0)), request("open.test"));
    assert.match(answer, /"x-real-ip":"127\.0\.0\.1"/);
  });

  it("closes a connection that starts without a header, answering nothing", async () => {
    assert.equal(await exchange(plain(), "", request("open.test")), "");
  });

  it("closes a connection whose header does not come in time", async () => {
    const socket = plain();
    const closed = new Promise<string>(resolve => {
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
    });
    socket.write("PROXY TCP4 203.0.113.7");
    assert.equal(await closed, "");
  });

  it("reads the header before the TLS handshake on the HTTPS listener", async () => {
    const raw = connect({ port: plane.httpsPort!, host: "127.0.0.1" });
    raw.write("PROXY TCP4 203.0.113.9 10.0.0.1 56324 443\r\n");
    const tls = connectTls({ socket: raw, servername: "office.test", rejectUnauthorized: false });
    const answer = await exchange(tls, "", request("office.test"));
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /"x-real-ip":"203\.0\.113\.9"/);
  });
});
