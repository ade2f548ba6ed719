// Source ranges and trusted proxies in the request path, over real sockets, on both the fast path
// and Node's HTTP path: clients connect from different loopback addresses (127.0.0.0/8 is all
// loopback on Linux); 127.0.0.9 is the trusted proxy, whose X-Forwarded-For names the client.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { DEFAULT_FRONT_DOOR } from "./request-rules";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { ask, namedBackend, upgradeStatus, type AskOptions, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const PROXY = "127.0.0.9";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

function echoedHeaders(body: string): Record<string, string> {
  return (JSON.parse(body) as { headers: Record<string, string> }).headers;
}

describe("data plane: source ranges and trusted proxies", () => {
  let main: Backend;
  let plane: DataPlane;

  before(async () => {
    main = await namedBackend("main");
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      defaultCertificates: [],
      frontDoor: { ...DEFAULT_FRONT_DOOR, trustedProxies: [PROXY] },
    });
    const slice = endpointSlice({
      service: "main",
      ports: [{ port: main.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const route = (name: string, host: string, annotations: Record<string, string>) =>
      ingress({ name, annotations, rules: [{ host, paths: [{ path: "/", service: "main" }] }] });
    await plane.apply(
      view(
        1,
        [
          route("office", "office.test", {
            [`${P}whitelist-source-range`]: "127.0.0.2/32,203.0.113.0/24",
          }),
          route("blocked", "blocked.test", {
            [`${P}allowlist-source-range`]: "127.0.0.0/8",
            [`${P}denylist-source-range`]: "127.0.0.3, 198.51.100.7",
          }),
          route("open", "open.test", {}),
        ],
        [slice],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  for (const [label, via] of PATHS) {
    const send = (host: string, options: AskOptions & { from: string }) =>
      ask(plane.httpPort, host, "/", {
        ...options,
        localAddress: options.from,
        headers: { ...via, ...options.headers },
      });

    describe(label, () => {
      it("serves a client inside the allowlist and answers 403 to one outside it", async () => {
        assert.equal((await send("office.test", { from: "127.0.0.2" })).status, 200);
        const outside = await send("office.test", { from: "127.0.0.4" });
        assert.equal(outside.status, 403);
        assert.equal(outside.body, "403 Forbidden\n");
      });

      it("denies first: an address in both lists is refused", async () => {
        assert.equal((await send("blocked.test", { from: "127.0.0.2" })).status, 200);
        assert.equal((await send("blocked.test", { from: "127.0.0.3" })).status, 403);
      });

      it("ignores X-Forwarded-For from a client that is not a trusted proxy", async () => {
        const spoofed = await send("office.test", {
          from: "127.0.0.4",
          headers: { "x-forwarded-for": "203.0.113.5" },
        });
        assert.equal(spoofed.status, 403);
        const passed = await send("open.test", {
          from: "127.0.0.4",
          headers: { "x-forwarded-for": "203.0.113.5" },
        });
        const headers = echoedHeaders(passed.body);
        assert.equal(headers["x-real-ip"], "127.0.0.4");
        assert.equal(headers["x-forwarded-for"], "203.0.113.5, 127.0.0.4");
      });

      it("behind the trusted proxy, judges the client it names, right-most untrusted first", async () => {
        const inside = await send("office.test", {
          from: PROXY,
          headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.5" },
        });
        assert.equal(inside.status, 200);
        // The client wrote an allowed address first; its own address, which the proxy appended, counts.
        const spoof = await send("office.test", {
          from: PROXY,
          headers: { "x-forwarded-for": "203.0.113.5, 198.51.100.7" },
        });
        assert.equal(spoof.status, 403);
        const denied = await send("blocked.test", {
          from: PROXY,
          headers: { "x-forwarded-for": "198.51.100.7" },
        });
        assert.equal(denied.status, 403);
      });

      it("behind the trusted proxy, sends the named client as X-Real-IP and appends the proxy", async () => {
        const answer = await send("open.test", {
          from: PROXY,
          headers: { "x-forwarded-for": "192.0.2.1, 203.0.113.5" },
        });
        const headers = echoedHeaders(answer.body);
        assert.equal(headers["x-real-ip"], "203.0.113.5");
        assert.equal(headers["x-forwarded-for"], `192.0.2.1, 203.0.113.5, ${PROXY}`);
      });
    });
  }

  it("refuses an upgrade from outside the allowlist before it reaches the backend", async () => {
    assert.equal(
      await upgradeStatus(plane.httpPort, "office.test", "127.0.0.4"),
      "HTTP/1.1 403 Forbidden",
    );
  });
});
