// Rate and connection limits in the request path, over real sockets, on both the fast path and
// Node's HTTP path: each client is a different loopback address (127.0.0.0/8 is all loopback on
// Linux). limit-rpm keeps the bucket still for the length of a test (1 r/m leaks 16 thousandths a
// second), so which request is refused does not depend on timing.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { Agent, type ServerResponse } from "node:http";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { ask, startBackend, upgradeStatus, type AskOptions, type Backend } from "./testkit";
import { waitUntil } from "../../test/harness/wait";

const P = "nginx.ingress.kubernetes.io/";

const PATHS: [string, Record<string, string>, string][] = [
  ["fast path", {}, "127.0.1"],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }, "127.0.2"],
];

describe("data plane: rate and connection limits", () => {
  let backend: Backend;
  let plane: DataPlane;
  const held: ServerResponse[] = [];

  before(async () => {
    // /hold answers only when the test lets it; anything else at once.
    backend = await startBackend((req, res) => {
      req.resume();
      if (req.url?.startsWith("/hold") === true) held.push(res);
      else res.end("ok");
    });
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const slice = endpointSlice({
      service: "app",
      ports: [{ port: backend.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const route = (name: string, annotations: Record<string, string>) =>
      ingress({
        name,
        annotations,
        rules: [
          { host: `${name}.test`, paths: [{ path: "/", service: "app" }] },
          { host: `${name}-too.test`, paths: [{ path: "/other", service: "app" }] },
        ],
      });
    await plane.apply(
      view(
        1,
        [
          route("rpm", {
            [`${P}limit-rpm`]: "1",
            [`${P}limit-burst-multiplier`]: "2",
            [`${P}limit-allowlist`]: "127.0.3.0/24",
          }),
          route("conn", { [`${P}limit-connections`]: "1" }),
          route("ws", { [`${P}limit-rpm`]: "1", [`${P}limit-burst-multiplier`]: "0" }),
        ],
        [slice],
      ),
    );
  });
  after(async () => {
    for (const res of held) res.end();
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  for (const [label, via, net] of PATHS) {
    const send = (host: string, path: string, from: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, path, {
        ...options,
        localAddress: from,
        headers: { ...via, ...options.headers },
      });
    const statuses = async (host: string, path: string, from: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await send(host, path, from)).status);
      return out;
    };

    describe(label, () => {
      it("limit-rpm 1 × burst multiplier 2: a fresh client gets 1 + 2 requests, then 503", async () => {
        assert.deepEqual(await statuses("rpm.test", "/", `${net}.1`, 4), [200, 200, 200, 503]);
        const refused = await send("rpm.test", "/", `${net}.1`);
        assert.equal(refused.status, 503);
        assert.equal(refused.body, "503 Service Unavailable\n");
      });

      it("counts per client address, across the Ingress's paths and hosts", async () => {
        assert.deepEqual(await statuses("rpm.test", "/", `${net}.2`, 2), [200, 200]);
        assert.deepEqual(await statuses("rpm-too.test", "/other", `${net}.2`, 2), [200, 503]);
        assert.deepEqual(await statuses("rpm.test", "/", `${net}.3`, 1), [200]);
      });

      it("does not limit a client in limit-allowlist", async () => {
        const from = `127.0.3.${label === "fast path" ? 1 : 2}`;
        assert.deepEqual(await statuses("rpm.test", "/", from, 6), [200, 200, 200, 200, 200, 200]);
      });

      it("limit-connections 1: a second request while one is open is refused, and served once it ends", async () => {
        const from = `${net}.4`;
        const first = send("conn.test", "/hold", from);
        await waitUntil("the first request at the backend", () => held.length === 1);
        assert.equal((await send("conn.test", "/", from)).status, 503);
        assert.equal((await send("conn.test", "/", `${net}.5`)).status, 200, "another client");
        held.shift()!.end("done");
        assert.equal((await first).status, 200);
        await waitUntil("the slot to be free", async () => {
          return (await send("conn.test", "/", from)).status === 200;
        });
      });

      it("frees the slot when the client resets its connection mid-exchange", async () => {
        const from = `${net}.6`;
        const socket = connect({ port: plane.httpPort, host: "127.0.0.1", localAddress: from });
        const headers = Object.entries({ host: "conn.test", ...via })
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join("");
        socket.write(`GET /hold HTTP/1.1\r\n${headers}\r\n`);
        socket.on("error", () => undefined);
        await waitUntil("the request at the backend", () => held.length === 1);
        assert.equal((await send("conn.test", "/", from)).status, 503);
        socket.resetAndDestroy();
        await waitUntil("the slot to be free", async () => {
          return (await send("conn.test", "/", from)).status === 200;
        });
        held.shift()!.end();
      });
    });
  }

  it("refuses a rate-limited upgrade before it reaches the backend", async () => {
    assert.match(await upgradeStatus(plane.httpPort, "ws.test", "127.0.4.1"), /^HTTP\/1.1 (?!503)/);
    assert.equal(
      await upgradeStatus(plane.httpPort, "ws.test", "127.0.4.1"),
      "HTTP/1.1 503 Service Unavailable",
    );
  });
});

describe("data plane: rate limits with 2 worker processes", () => {
  let backend: Backend;
  let plane: DataPlane;

  before(async () => {
    backend = await startBackend((req, res) => {
      req.resume();
      res.end("ok");
    });
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      workers: 2,
      defaultCertificates: [],
    });
    const slice = endpointSlice({
      service: "app",
      ports: [{ port: backend.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const annotations = { [`${P}limit-rpm`]: "20", [`${P}limit-burst-multiplier`]: "1" };
    const rules = [{ host: "w.test", paths: [{ path: "/", service: "app" }] }];
    await plane.apply(view(1, [ingress({ name: "w", annotations, rules })], [slice]));
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  const served = async (from: string, agent: Agent | undefined) => {
    let ok = 0;
    for (let i = 0; i < 40; i++) {
      const answer = await ask(plane.httpPort, "w.test", "/", { localAddress: from, agent });
      if (answer.status === 200) ok++;
    }
    return ok;
  };

  it("each worker enforces half: one keep-alive connection gets 1 + 10 of nginx's 1 + 20", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal(await served("127.0.5.1", agent), 11);
    } finally {
      agent.destroy();
    }
  });

  it("a client spread over new connections gets at most the pod's whole burst", async () => {
    const ok = await served("127.0.5.2", undefined);
    assert.ok(ok > 11 && ok <= 22, `${ok} served`);
  });
});
