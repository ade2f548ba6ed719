import assert from "node:assert/strict";
import { describe, it } from "node:test";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { IDLE_TIMEOUT_MS, outlastClientIdle } from "./keep-alive";
import { makeCertificate } from "../../test/fixtures/certificates";

const certificate = makeCertificate({ key: "ecdsa", dnsNames: ["localhost"] });

/** One POST on `agent`; whether it went over a connection the agent already had. */
function post(agent: https.Agent, port: number): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: "127.0.0.1", port, method: "POST", path: "/mutate", agent, servername: "localhost" },
      res => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

describe("outlastClientIdle", () => {
  it("gives the servers it makes an idle timeout past the API server's 90 s", () => {
    const local = { createServer: https.createServer };
    outlastClientIdle(local);
    const server = local.createServer();
    assert.equal(server.keepAliveTimeout, IDLE_TIMEOUT_MS);
    assert.ok(IDLE_TIMEOUT_MS > 90_000);
    // The module's own object is not touched: only what is passed in.
    assert.equal(https.createServer({}).keepAliveTimeout, 5_000);
  });

  it("keeps a kept-alive connection open past Node's default 5 s of idleness", async () => {
    const local = { createServer: https.createServer };
    outlastClientIdle(local);
    const server = local
      .createServer({ key: certificate.keyPem, cert: certificate.certPem }, (_req, res) =>
        res.end("{}"),
      )
      .listen(0, "127.0.0.1");
    await new Promise(resolve => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: certificate.certPem });
    try {
      assert.deepEqual(await post(agent, port), { status: 200, reused: false });
      await sleep(6_000);
      // Node's default server would have closed it at 5 s; the agent would open a new one.
      assert.deepEqual(await post(agent, port), { status: 200, reused: true });
    } finally {
      agent.destroy();
      server.close();
    }
  });
});
