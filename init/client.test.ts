import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { retryDelay, runInit, type InitIo } from "./client";
import { loadInitSettings, type InitSettings } from "./settings";

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A real HTTP server answering from `handler`; `n` counts requests. */
async function serve(handler: Handler): Promise<{ url: string; server: Server; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? "-"}`);
    handler(req, res, seen.length);
  });
  await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

const json = (res: ServerResponse, status: number, body: unknown): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

function settings(url: string): InitSettings {
  const loaded = loadInitSettings({
    POD_NAME: "web-1",
    POD_NAMESPACE: "shop",
    POD_UID: "u1",
    POD_IP: "10.0.0.1",
    BULWARK_PERMISSION_SERVER: url,
    BULWARK_INIT_WAIT_SECONDS: "0",
    BULWARK_INIT_RETRY_MAX_SECONDS: "0.05",
  });
  assert.ok(loaded.ok);
  return loaded.settings;
}

const lines: string[] = [];
const io: InitIo = {
  say: line => lines.push(line),
  // The waits are the client's own business (retryDelay is tested alone): they take no time here.
  sleep: () => new Promise(r => setImmediate(r)),
  random: () => 0,
  fetch: (...args) => fetch(...args),
  readToken: () => "tok",
};

describe("bulwark-init client", () => {
  const servers: Server[] = [];
  after(() => servers.forEach(s => s.close()));

  it("retries transient answers itself, then waits on the status until granted", async () => {
    const { url, server, seen } = await serve((req, res, n) => {
      if (n <= 2) return json(res, n === 1 ? 503 : 409, { error: "not yet" });
      if (req.method === "POST")
        return json(res, 202, { verdict: "wait", reason: "granting", status: { rev: 1 } });
      return json(
        res,
        200,
        n < 5 ? { verdict: "wait", status: { rev: n } } : { verdict: "granted" },
      );
    });
    servers.push(server);
    assert.deepEqual(await runInit(settings(url), io), { granted: true });
    assert.deepEqual(
      seen.slice(0, 3).map(s => s.split(" ")[0]),
      ["POST", "POST", "POST"],
    );
    assert.match(seen[3] ?? "", /^GET \/v1\/grants\/shop\/web-1\?uid=u1&rev=1&wait=0 Bearer tok$/);
  });

  it("retries when the server cannot be reached at all", async () => {
    const { url, server } = await serve((_req, res) => json(res, 202, { verdict: "granted" }));
    servers.push(server);
    const port = Number(new URL(url).port);
    await new Promise(r => server.close(r));
    let calls = 0;
    const flaky: InitIo = {
      ...io,
      fetch: async (input, init) => {
        calls++;
        if (calls < 3) return fetch(`http://127.0.0.1:${port}/v1/grants`, init);
        return new Response(JSON.stringify({ verdict: "granted" }), { status: 202 });
      },
    };
    assert.deepEqual(await runInit(settings(url), flaky), { granted: true });
    assert.equal(calls, 3, "two refused connections, then an answer");
  });

  const definitive: [number, string][] = [
    [401, "token not valid"],
    [403, "token is bound to pod shop/other"],
    [412, "no finalizer"],
  ];
  for (const [status, error] of definitive) {
    it(`given ${status}, gives up at once with one line`, async () => {
      const { url, server, seen } = await serve((_req, res) => json(res, status, { error }));
      servers.push(server);
      assert.deepEqual(await runInit(settings(url), io), {
        granted: false,
        reason: `refused: ${status} ${error}`,
      });
      assert.equal(seen.length, 1);
    });
  }

  it("gives up when the status says the breaker is open", async () => {
    const { url, server } = await serve((_req, res) =>
      json(res, 202, { verdict: "refused", reason: "breaker open after 3 failed attempts" }),
    );
    servers.push(server);
    assert.deepEqual(await runInit(settings(url), io), {
      granted: false,
      reason: "breaker open after 3 failed attempts",
    });
  });
});

describe("retryDelay", () => {
  it("given failures, grows [d, 2d) from 250ms and stays under the cap", () => {
    assert.equal(
      retryDelay(1, 10_000, () => 0),
      250,
    );
    assert.equal(
      retryDelay(3, 10_000, () => 0),
      1000,
    );
    assert.equal(
      retryDelay(3, 10_000, () => 0.5),
      1500,
    );
    assert.equal(
      retryDelay(20, 10_000, () => 0.9),
      10_000,
    );
  });
});

describe("bulwark-init settings", () => {
  before(() => lines.splice(0));
  it("names a missing Downward API variable", () => {
    const loaded = loadInitSettings({
      POD_NAME: "a",
      POD_NAMESPACE: "b",
      POD_IP: "c",
      BULWARK_PERMISSION_SERVER: "http://x",
    });
    assert.equal(loaded.ok, false);
    assert.equal(
      (loaded as { message: string }).message,
      "POD_UID is required (the pod UID, from the Downward API)",
    );
  });
  it("refuses a server that is not a URL", () => {
    const loaded = loadInitSettings({
      POD_NAME: "a",
      POD_NAMESPACE: "b",
      POD_UID: "u",
      POD_IP: "c",
      BULWARK_PERMISSION_SERVER: "server:8443",
    });
    assert.match(
      (loaded as { message: string }).message,
      /^BULWARK_PERMISSION_SERVER must be an http:\/\/ or https:\/\/ URL/,
    );
  });
});
