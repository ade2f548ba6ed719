import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { KubeConfig } from "@kubernetes/client-node";
import { ApiClient } from "./api-client";

describe("ApiClient.getJson", () => {
  // A list of 200 objects of 1 KB each, or no answer at all for /silent.
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/silent")) return;
    const items = Array.from({ length: 200 }, (_, i) => ({
      metadata: { name: `o-${i}` },
      data: "x".repeat(1000),
    }));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items }));
  });
  let client: ApiClient;

  before(async () => {
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    client = new ApiClient(kc);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it("keeps no answer alive through a signal that outlives its requests (a reflector's)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const signal = new AbortController().signal;
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) {
      refs.push(new WeakRef((await client.getJson("/list", 5000, signal)) as object));
    }
    assert.equal(getEventListeners(signal, "abort").length, 0, "every listener removed");
    await new Promise(resolve => setImmediate(resolve));
    gc();
    assert.equal(refs.filter(ref => ref.deref() !== undefined).length, 0);
  });

  it("an abort ends a request under way; an aborted signal sends none", async () => {
    const controller = new AbortController();
    const pending = client.getJson("/silent", 30_000, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, /GET \/silent: aborted/);
    await assert.rejects(client.getJson("/list", 5000, controller.signal), /aborted/);
  });

  it("a request with no answer fails at its deadline", async () => {
    await assert.rejects(client.getJson("/silent", 100), /no answer in 100 ms/);
  });
});
