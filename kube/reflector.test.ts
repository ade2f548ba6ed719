// The list/watch loop against a stand-in that speaks the API server's list and watch protocol:
// the real API server cannot be told to expire a watch (410), fail a list or fall silent on cue.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import { KubeConfig } from "@kubernetes/client-node";
import { ApiClient } from "./api-client";
import { Reflector, wholeLists, type KubeObject } from "./reflector";
import { waitUntil } from "../test/harness/wait";

type Step = (url: URL, res: ServerResponse) => void;

const item = (name: string, rv: string) => ({
  metadata: { namespace: "ns", name, resourceVersion: rv },
});
const json = (res: ServerResponse, status: number, body: unknown): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
const watchLine = (res: ServerResponse, type: string, object: unknown): void =>
  void res.write(`${JSON.stringify({ type, object })}\n`);

async function standIn(steps: Step[]) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const watching = url.searchParams.get("watch") === "true";
    seen.push(`${watching ? "watch" : "list"}@${url.searchParams.get("resourceVersion") ?? ""}`);
    const step = steps.shift();
    if (step) step(url, res);
    // Past the script: a watch that stays open and silent.
    else res.writeHead(200, { "content-type": "application/json" }).flushHeaders();
  });
  await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  const close = (): Promise<void> =>
    new Promise(resolve => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { seen, client: new ApiClient(kc), close };
}

describe("Reflector", () => {
  it("lists, watches from the list's version, relists on 410, retries a failed list, drops a silent watch and resumes", async () => {
    const { seen, client, close } = await standIn([
      (_u, res) => json(res, 200, { metadata: { resourceVersion: "10" }, items: [item("x", "1")] }),
      (_u, res) => {
        res.writeHead(200);
        watchLine(res, "ADDED", item("y", "11"));
        watchLine(res, "ERROR", { kind: "Status", code: 410, message: "too old resource version" });
        res.end();
      },
      (_u, res) => json(res, 500, { message: "etcd is down" }),
      (_u, res) =>
        json(res, 200, { metadata: { resourceVersion: "20" }, items: [item("y", "12")] }),
    ]);
    const held = new Map<string, KubeObject>();
    const reflector = new Reflector(
      client,
      { name: "things", path: "/apis/x/v1/things" },
      wholeLists({
        replace: items => {
          held.clear();
          for (const item of items) held.set(item.metadata?.name ?? "", item);
        },
        upsert: object => void held.set(object.metadata?.name ?? "", object),
        remove: object => void held.delete(object.metadata?.name ?? ""),
      }),
      {
        watchSeconds: 0,
        idleMarginMs: 200,
        backoff: { durationMs: 10, factor: 2, jitter: 0, steps: 10, capMs: 50 },
      },
    );
    try {
      reflector.start();
      await waitUntil("a silent watch to be dropped and resumed", () => seen.length >= 6);
      assert.deepEqual(seen.slice(0, 6), [
        "list@",
        "watch@10",
        "list@",
        "list@",
        "watch@20",
        "watch@20",
      ]);
      assert.deepEqual([...held.keys()], ["y"], "the relist removed x");
      const status = reflector.status();
      assert.equal(status.synced, true);
      assert.equal(status.lists, 2);
      assert.ok(status.errors >= 2, "the failed list and the silent watch count as errors");
      assert.match(status.lastError ?? "", /silent|etcd is down/);
    } finally {
      await reflector.stop();
      await close();
    }
  });

  it("keeps retrying, without throwing, while nothing answers", async () => {
    const { client, close } = await standIn([]);
    await close();
    const reflector = new Reflector(
      client,
      { name: "things", path: "/apis/x/v1/things" },
      wholeLists({ replace() {}, upsert() {}, remove() {} }),
      { backoff: { durationMs: 5, factor: 2, jitter: 0, steps: 100, capMs: 20 } },
    );
    reflector.start();
    await waitUntil("several failed attempts", () => reflector.status().errors >= 5);
    assert.equal(reflector.status().synced, false);
    assert.match(reflector.status().lastError ?? "", /ECONNREFUSED/);
    await reflector.stop();
  });
});
