// Cookie session affinity in the request path, over real sockets, on both the fast path and Node's
// HTTP path: a Service of three endpoints on loopback addresses sharing a port, a canary Service,
// and a Service with an endpoint that goes down (change-on-failure).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { ask, type Answer, type AskOptions } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const POOL = ["127.0.0.21", "127.0.0.22", "127.0.0.23"];
const CANARY = "127.0.0.31";
const FLAKY = ["127.0.0.25", "127.0.0.26"];
const DOWN = FLAKY[0]!;

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

/** A server answering with its own address; an upgrade is accepted, then the address sent. */
function listen(address: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end(address));
  });
  server.on("upgrade", (_req, socket: Socket) => {
    socket.end(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n${address}`,
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, address, () => resolve(server));
  });
}

async function listenAll(addresses: readonly string[]): Promise<Server[]> {
  const first = await listen(addresses[0]!, 0);
  const port = (first.address() as AddressInfo).port;
  const rest = await Promise.all(addresses.slice(1).map(address => listen(address, port)));
  return [first, ...rest];
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise(resolve => server.close(() => resolve()));
}

/** The name=value part of a Set-Cookie answer header; undefined without one. */
function cookieOf(answer: Answer, name = "INGRESSCOOKIE"): string | undefined {
  const header = answer.headers["set-cookie"]?.find(value => value.startsWith(`${name}=`));
  return header?.slice(0, header.indexOf(";"));
}

/** A WebSocket-style upgrade sent by hand: everything the gateway sent back until it closed. */
function upgrade(port: number, host: string, cookie?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      const cookieLine = cookie === undefined ? "" : `Cookie: ${cookie}\r\n`;
      socket.write(
        `GET /app/ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${cookieLine}` +
          "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
    });
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}

const withUid = (uid: string, made: ReturnType<typeof ingress>) => {
  made.metadata!.uid = uid;
  return made;
};

describe("data plane: cookie session affinity", () => {
  let pool: Server[];
  let canary: Server;
  let flaky: Server[];
  let plane: DataPlane;
  let routes: ReturnType<typeof ingress>[];
  let slices: ReturnType<typeof endpointSlice>[];
  // Cookies naming the endpoint that goes down, for each change-on-failure route.
  const downCookies = new Map<string, string>();

  before(async () => {
    pool = await listenAll(POOL);
    canary = await listen(CANARY, 0);
    flaky = await listenAll(FLAKY);
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    slices = [
      endpointSlice({
        service: "pool",
        ports: [{ port: portOf(pool[0]!) }],
        endpoints: POOL.map(address => ({ address })),
      }),
      endpointSlice({
        service: "beta",
        ports: [{ port: portOf(canary) }],
        endpoints: [{ address: CANARY }],
      }),
      endpointSlice({
        service: "flaky",
        ports: [{ port: portOf(flaky[0]!) }],
        endpoints: FLAKY.map(address => ({ address })),
      }),
    ];
    const route = (name: string, annotations: Record<string, string>, service = "pool") =>
      withUid(
        `uid-${name}`,
        ingress({
          name,
          annotations: { [`${P}affinity`]: "cookie", ...annotations },
          rules: [{ host: `${name}.test`, paths: [{ path: "/app", service }] }],
        }),
      );
    routes = [
      route("balanced", {}),
      route("persistent", { [`${P}affinity-mode`]: "persistent" }),
      route("attributes", {
        [`${P}session-cookie-name`]: "route",
        [`${P}session-cookie-max-age`]: "172800",
        [`${P}session-cookie-domain`]: "attributes.test",
        [`${P}session-cookie-path`]: "/app/x",
        [`${P}session-cookie-samesite`]: "None",
        [`${P}session-cookie-conditional-samesite-none`]: "true",
        [`${P}session-cookie-secure`]: "true",
      }),
      route("hashed", { [`${P}upstream-hash-by`]: "$request_uri" }),
      route(
        "failover",
        {
          [`${P}affinity-mode`]: "persistent",
          [`${P}session-cookie-change-on-failure`]: "true",
        },
        "flaky",
      ),
      route("stubborn", { [`${P}affinity-mode`]: "persistent" }, "flaky"),
      route("shop", {}),
      withUid(
        "uid-beta",
        ingress({
          name: "beta",
          created: "2025-01-02T00:00:00Z",
          annotations: { [`${P}canary`]: "true", [`${P}canary-weight`]: "50" },
          rules: [{ host: "shop.test", paths: [{ path: "/app", service: "beta" }] }],
        }),
      ),
    ];
    await plane.apply(view(1, routes, slices));
    for (const host of ["failover.test", "stubborn.test"]) {
      for (let tries = 0; tries < 64 && !downCookies.has(host); tries++) {
        const answer = await ask(plane.httpPort, host, "/app");
        if (answer.body === DOWN) downCookies.set(host, cookieOf(answer)!);
      }
      assert.ok(downCookies.has(host), `a session on ${DOWN} for ${host}`);
    }
    // From here on the endpoint refuses connections, as a crashed pod does before it is removed.
    await close(flaky[0]!);
  });

  after(async () => {
    await plane.close({ drainMs: 200 });
    for (const server of [...pool, canary, flaky[1]!]) await close(server);
  });

  for (const [label, via] of PATHS) {
    const send = (host: string, path: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, path, { ...options, headers: { ...via, ...options.headers } });
    const served = async (host: string, cookie?: string, path = "/app") => {
      const headers: Record<string, string> = cookie === undefined ? {} : { cookie };
      const answer = await send(host, path, { headers });
      assert.equal(answer.status, 200, answer.body);
      return answer;
    };

    describe(label, () => {
      for (const mode of ["balanced", "persistent"]) {
        it(`${mode}: a new client gets a cookie; with it, every request goes to the same endpoint; clients spread`, async () => {
          const endpoints = new Set<string>();
          for (let client = 0; client < 12; client++) {
            const first = await served(`${mode}.test`);
            const cookie = cookieOf(first);
            assert.ok(cookie !== undefined, "a Set-Cookie");
            assert.match(
              first.headers["set-cookie"]![0]!,
              /^INGRESSCOOKIE=[^;]+; Path=\/app; HttpOnly$/,
            );
            for (let again = 0; again < 4; again++) {
              const next = await served(`${mode}.test`, `other=1; ${cookie}`, `/app/${again}`);
              assert.equal(next.body, first.body);
              assert.equal(next.headers["set-cookie"], undefined, "no new cookie");
            }
            endpoints.add(first.body);
          }
          assert.ok(endpoints.size >= 2, [...endpoints].join(","));
        });
      }

      it("the cookie names no address and takes the annotations' attributes (SameSite=None left out for an old Chrome)", async () => {
        const answer = await served("attributes.test");
        const header = answer.headers["set-cookie"]![0]!;
        // The address neither as text nor as hex (7f000001); a shorter hex run could be a hash by chance.
        assert.doesNotMatch(header, /127\.0\.0\.1|7f000001/);
        assert.match(
          header,
          /^route=[0-9a-f.]+\|[0-9a-f]+; Max-Age=172800; Domain=attributes\.test; Path=\/app\/x; Secure; HttpOnly; SameSite=None$/,
        );
        const old = await send("attributes.test", "/app", {
          headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/59.0.3071.115" },
        });
        assert.match(old.headers["set-cookie"]![0]!, /; Secure; HttpOnly$/);
      });

      it("attack: garbage, forged and other routes' cookies count as none: a pool endpoint and a new cookie, never an error", async () => {
        const persistent = cookieOf(await served("persistent.test"))!;
        const balanced = cookieOf(await served("balanced.test"))!;
        const value = balanced.slice(balanced.indexOf("=") + 1);
        const forged = [
          "INGRESSCOOKIE=garbage",
          `INGRESSCOOKIE=${"f".repeat(16)}.${"0".repeat(16)}|${value.slice(-16)}`,
          `INGRESSCOOKIE=${value.replace(/^./, c => (c === "a" ? "b" : "a"))}`,
          `INGRESSCOOKIE=${"x".repeat(4000)}`,
          "INGRESSCOOKIE=127.0.0.99:1|0000000000000000",
          persistent,
        ];
        for (const cookie of forged) {
          const answer = await served("balanced.test", cookie);
          assert.ok(POOL.includes(answer.body), answer.body);
          assert.ok(cookieOf(answer) !== undefined, `a new cookie for ${cookie.slice(0, 40)}`);
        }
      });

      it("affinity wins over upstream-hash-by: with a cookie, every URI goes to the cookie's endpoint", async () => {
        const first = await served("hashed.test");
        const cookie = cookieOf(first)!;
        for (let n = 0; n < 12; n++) {
          assert.equal((await served("hashed.test", cookie, `/app/page/${n}`)).body, first.body);
        }
      });

      it("a sticky client keeps its canary decision: canary clients stay on the canary, main clients on main", async () => {
        const variants = new Set<string>();
        for (let client = 0; client < 16; client++) {
          const first = await served("shop.test");
          const cookie = cookieOf(first)!;
          for (let again = 0; again < 4; again++) {
            assert.equal((await served("shop.test", cookie)).body, first.body);
          }
          variants.add(first.body === CANARY ? "canary" : "main");
        }
        assert.deepEqual([...variants].sort(), ["canary", "main"]);
      });

      it("change-on-failure: when the cookie's endpoint refuses, the retry goes to another endpoint and a new cookie names it", async () => {
        const answer = await served("failover.test", downCookies.get("failover.test"));
        assert.equal(answer.body, FLAKY[1]);
        const cookie = cookieOf(answer)!;
        assert.equal((await served("failover.test", cookie)).body, FLAKY[1]);
      });

      it("without change-on-failure (the default), the retry goes to the cookie's endpoint again: 502", async () => {
        const answer = await send("stubborn.test", "/app", {
          headers: { cookie: downCookies.get("stubborn.test")! },
        });
        assert.equal(answer.status, 502);
        assert.equal(cookieOf(answer), undefined);
      });

      it("a new client is never sent to the endpoint that refuses: the retry picks another and the cookie names it", async () => {
        for (let client = 0; client < 8; client++) {
          const answer = await served("stubborn.test");
          assert.equal(answer.body, FLAKY[1]);
          assert.equal((await served("stubborn.test", cookieOf(answer))).body, FLAKY[1]);
        }
      });
    });
  }

  it("an endpoint no longer ready: its persistent clients get another endpoint and a new cookie", async () => {
    let cookie: string | undefined;
    for (let tries = 0; tries < 64 && cookie === undefined; tries++) {
      const answer = await ask(plane.httpPort, "persistent.test", "/app");
      if (answer.body === POOL[0]) cookie = cookieOf(answer);
    }
    assert.ok(cookie !== undefined, `a session on ${POOL[0]}`);
    const notReady = endpointSlice({
      service: "pool",
      ports: [{ port: portOf(pool[0]!) }],
      endpoints: POOL.map(address => ({ address, ready: address !== POOL[0] })),
    });
    await plane.apply(view(2, routes, [notReady, ...slices.slice(1)]));
    const moved = await ask(plane.httpPort, "persistent.test", "/app", { headers: { cookie } });
    assert.ok(POOL.slice(1).includes(moved.body), moved.body);
    const renewed = cookieOf(moved);
    assert.ok(renewed !== undefined && renewed !== cookie, "a new cookie");
    const again = await ask(plane.httpPort, "persistent.test", "/app", {
      headers: { cookie: renewed },
    });
    assert.equal(again.body, moved.body);
  });

  it("an upgrade (WebSocket) goes to the cookie's endpoint; a new client gets its cookie on the 101", async () => {
    for (const mode of ["balanced", "persistent"]) {
      const first = await upgrade(plane.httpPort, `${mode}.test`);
      assert.match(first, /^HTTP\/1\.1 101 /);
      const cookie = /\r\nSet-Cookie: (INGRESSCOOKIE=[^;]+);/i.exec(first)?.[1];
      assert.ok(cookie !== undefined, first);
      const address = first.slice(first.indexOf("\r\n\r\n") + 4);
      assert.ok(POOL.includes(address), address);
      for (let again = 0; again < 4; again++) {
        const next = await upgrade(plane.httpPort, `${mode}.test`, cookie);
        assert.doesNotMatch(next, /Set-Cookie/i);
        assert.equal(next.slice(next.indexOf("\r\n\r\n") + 4), address);
        assert.equal(
          (await ask(plane.httpPort, `${mode}.test`, "/app", { headers: { cookie } })).body,
          address,
        );
      }
    }
  });

  it("curl with a cookie jar sticks to one endpoint (a real client keeping the cookie)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "affinity-"));
    try {
      const jar = join(dir, "jar");
      const curl = async () => {
        const { stdout } = await promisify(execFile)("curl", [
          "-sS",
          "-b",
          jar,
          "-c",
          jar,
          "-H",
          "Host: persistent.test",
          `http://127.0.0.1:${plane.httpPort}/app/page`,
        ]);
        return stdout;
      };
      const first = await curl();
      assert.ok(POOL.includes(first), first);
      for (let again = 0; again < 6; again++) assert.equal(await curl(), first);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
