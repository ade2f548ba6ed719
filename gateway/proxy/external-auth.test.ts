// auth-url in the request path, over real sockets, on both the fast path and Node's HTTP path and
// on upgrades, against our oauth2-proxy-style auth server: who gets through, what the backend
// sees, what the client is answered, and how the answers are counted.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { startOAuth2StandIn, type OAuth2StandIn } from "../../test/harness/oauth2-stand-in";
import { ask, namedBackend, upgradeStatus, type AskOptions, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

function echoed(body: string): { headers: Record<string, string>; body: string; url: string } {
  return JSON.parse(body) as { headers: Record<string, string>; body: string; url: string };
}

/** A WebSocket upgrade with extra header lines; the status line of the answer. */
function rawUpgrade(port: number, host: string, lines: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${lines}` +
          "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
    });
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (!text.includes("\r\n")) return;
      resolve(text.slice(0, text.indexOf("\r\n")));
      socket.destroy();
    });
    socket.on("error", reject);
  });
}

describe("data plane: external auth (auth-url)", () => {
  let backend: Backend;
  let auth: OAuth2StandIn;
  let plane: DataPlane;

  before(async () => {
    backend = await namedBackend("main");
    auth = await startOAuth2StandIn();
    auth.addSession("alice-token", {
      user: "alice",
      email: "alice@example.com",
      groups: ["staff"],
    });
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      defaultCertificates: [],
      compile: {
        maxCanaries: 20,
        canaryReferrers: [""],
        traffic: {
          redirectPort: 443,
          compare: "exact",
          auth: { connectTimeoutMs: 1000, readTimeoutMs: 500 },
        },
      },
    });
    const slice = endpointSlice({
      service: "main",
      ports: [{ port: backend.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const route = (name: string, host: string, annotations: Record<string, string>) =>
      ingress({ name, annotations, rules: [{ host, paths: [{ path: "/", service: "main" }] }] });
    const authUrl = `${auth.origin}/oauth2/auth`;
    await plane.apply(
      view(
        1,
        [
          route("app", "app.test", {
            [`${P}auth-url`]: authUrl,
            [`${P}auth-response-headers`]: "X-Auth-Request-User, X-Auth-Request-Email",
          }),
          route("signin", "signin.test", {
            [`${P}auth-url`]: authUrl,
            [`${P}auth-signin`]: "https://login.test/oauth2/start",
          }),
          route("staff", "staff.test", { [`${P}auth-url`]: `${authUrl}?allowed_groups=admins` }),
          ingress({
            name: "wild",
            annotations: { [`${P}auth-url`]: "http://$host/oauth2/auth" },
            rules: [{ host: "*.wild.test", paths: [{ path: "/", service: "main" }] }],
          }),
          route("open", "open.test", {}),
        ],
        [slice],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
    await auth.close();
  });
  beforeEach(async () => {
    auth.configure({});
    await auth.setOutage(false);
  });

  for (const [label, via] of PATHS) {
    const send = (host: string, path: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, path, { ...options, headers: { ...via, ...options.headers } });

    describe(label, () => {
      it("proxies an authorized request with the auth server's user, never the client's", async () => {
        const answer = await send("app.test", "/orders?id=7", {
          method: "POST",
          body: "payload",
          headers: {
            cookie: "_oauth2_proxy=alice-token",
            "x-auth-request-user": "root",
            "X-Auth-Request-Email": "root@evil.test",
          },
        });
        assert.equal(answer.status, 200);
        const seen = echoed(answer.body);
        assert.equal(seen.headers["x-auth-request-user"], "alice");
        assert.equal(seen.headers["x-auth-request-email"], "alice@example.com");
        assert.equal(seen.body, "payload", "the body reaches the backend after the auth step");
        assert.equal(seen.url, "/orders?id=7");
      });

      it("answers 401 to a request without a session, and the backend never sees it", async () => {
        const answer = await send("app.test", "/secret", {
          headers: { "x-auth-request-user": "alice" },
        });
        assert.equal(answer.status, 401);
        assert.equal(answer.headers["www-authenticate"], 'Bearer realm="oauth2"');
        assert.equal(answer.headers["x-backend"], undefined);
      });

      it("redirects a 401 to auth-signin with the original URL in rd", async () => {
        const answer = await send("signin.test", "/a?b=c");
        assert.equal(answer.status, 302);
        assert.equal(
          answer.headers.location,
          "https://login.test/oauth2/start?rd=http://signin.test%2Fa%3Fb%3Dc",
        );
      });

      it("answers 403 when the auth server forbids", async () => {
        const answer = await send("staff.test", "/", {
          headers: { authorization: "Bearer alice-token" },
        });
        assert.equal(answer.status, 403);
      });

      it("answers 500 while the auth server is down, never passing the request", async () => {
        await auth.setOutage("refuse");
        const answer = await send("app.test", "/", {
          headers: { cookie: "_oauth2_proxy=alice-token" },
        });
        assert.equal(answer.status, 500);
        assert.equal(answer.headers["x-backend"], undefined);
      });

      it("answers 500 when the auth server is slower than the read timeout", async () => {
        auth.configure({ delayMs: 2000 });
        const answer = await send("app.test", "/", {
          headers: { cookie: "_oauth2_proxy=alice-token" },
        });
        assert.equal(answer.status, 500);
      });

      it("answers 500 when the auth server fails (500)", async () => {
        auth.configure({ errorRate: 1 });
        const answer = await send("app.test", "/", {
          headers: { cookie: "_oauth2_proxy=alice-token" },
        });
        assert.equal(answer.status, 500);
      });

      it("passes the auth server's refreshed cookie to the client with the backend's answer", async () => {
        auth.configure({ refreshCookie: "_oauth2_proxy=alice-token; Path=/; HttpOnly" });
        const answer = await send("app.test", "/", {
          headers: { cookie: "_oauth2_proxy=alice-token" },
        });
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.headers["set-cookie"], [
          "_oauth2_proxy=alice-token; Path=/; HttpOnly",
        ]);
      });

      it("refuses a route whose auth-url names $host under a wildcard host (503)", async () => {
        const answer = await send("evil.wild.test", "/");
        assert.equal(answer.status, 503);
      });

      it("leaves routes without auth-url alone", async () => {
        assert.equal((await send("open.test", "/")).status, 200);
      });
    });
  }

  it("keeps a denied request's body away from the next request on the connection (fast path)", async () => {
    // A POST refused by the auth server, then a second request smuggled in its body.
    const smuggled = "GET /smuggled HTTP/1.1\r\nHost: open.test\r\n\r\n";
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port: plane.httpPort, host: "127.0.0.1" }, () => {
        socket.write(
          `POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
        );
      });
      let out = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => (out += chunk));
      socket.on("close", () => resolve(out));
      socket.on("error", reject);
      setTimeout(() => socket.destroy(), 1500);
    });
    assert.match(text, /^HTTP\/1\.1 401 /);
    assert.equal(
      text.match(/HTTP\/1\.1 /g)?.length,
      1,
      "one answer: the body was not read as a request",
    );
  });

  it("holds an upgrade for the auth verdict: 401 without a session, 101 with one and the user", async () => {
    const upgrades: Record<string, unknown>[] = [];
    backend.server.on("upgrade", (req: { headers: Record<string, unknown> }, socket: Socket) => {
      upgrades.push(req.headers);
      socket.end(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
      );
    });
    assert.equal(
      await upgradeStatus(plane.httpPort, "app.test", "127.0.0.1"),
      "HTTP/1.1 401 Unauthorized",
    );
    assert.equal(upgrades.length, 0);
    const status = await rawUpgrade(
      plane.httpPort,
      "app.test",
      "Cookie: _oauth2_proxy=alice-token\r\nX-Auth-Request-User: root\r\n",
    );
    assert.equal(status, "HTTP/1.1 101 Switching Protocols");
    assert.equal(upgrades.length, 1);
    assert.equal(upgrades[0]!["x-auth-request-user"], "alice");
  });

  it("counts the auth answers by host and decision", async () => {
    const metrics = (await plane.trafficMetrics())
      .flat()
      .find(m => m.name === "bulwark_gateway_answers_total");
    const count = (host: string, decision: string) =>
      (metrics?.values ?? [])
        .filter(v => v.labels.host === host && v.labels.decision === decision)
        .reduce((sum, v) => sum + v.value, 0);
    assert.ok(count("app.test", "auth-denied") >= 3, "two 401s and the upgrade's");
    assert.ok(count("app.test", "auth-error") >= 6);
    assert.equal(count("signin.test", "auth-signin"), 2);
    assert.equal(count("staff.test", "auth-denied"), 2);
  });
});
