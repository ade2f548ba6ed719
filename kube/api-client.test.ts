import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { KubeConfig } from "@kubernetes/client-node";
import { ApiClient, jsonLines } from "./api-client";
import { pick, seededRandom } from "../test/harness/generate";

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

describe("jsonLines", () => {
  /** Watch events of random shapes and sizes (a line of JSON never holds a raw newline). */
  function events(random: () => number, count: number): unknown[] {
    return Array.from({ length: count }, (_, i) => ({
      type: pick(random, ["ADDED", "MODIFIED", "DELETED"]),
      object: {
        metadata: { name: `o-${i}`, annotations: { note: "line\nbreak é 🙂" } },
        data: "x".repeat(Math.floor(random() ** 3 * 40_000)),
      },
    }));
  }

  /** The stream cut at random places, some cuts right at or next to a newline. */
  function chunks(random: () => number, text: string): string[] {
    const cuts: string[] = [];
    for (let at = 0; at < text.length; ) {
      const size = pick(random, [1, 2, 7, 100, 4096, 16_384, 70_000]);
      cuts.push(text.slice(at, at + size));
      at += size;
    }
    return cuts;
  }

  it("yields each line once, whole, wherever the chunks are cut (200 generated streams)", () => {
    const random = seededRandom(7);
    for (let stream = 0; stream < 200; stream++) {
      const sent = events(random, 1 + Math.floor(random() * 12));
      // Blank lines between events, as a proxy may add: skipped.
      const text = sent.map(e => JSON.stringify(e) + (random() < 0.2 ? "\n\n" : "\n")).join("");
      const got: unknown[] = [];
      const push = jsonLines(line => got.push(line));
      for (const chunk of chunks(random, text)) push(chunk);
      assert.deepEqual(got, sent, `stream ${stream}`);
    }
  });

  it("keeps a line without its newline until the newline arrives", () => {
    const got: unknown[] = [];
    const push = jsonLines(line => got.push(line));
    push('{"a":');
    push("1}");
    assert.deepEqual(got, []);
    push('\n{"b":2}\n{"c"');
    assert.deepEqual(got, [{ a: 1 }, { b: 2 }]);
  });

  it("throws on a line that is not JSON, after yielding the lines before it", () => {
    const got: unknown[] = [];
    const push = jsonLines(line => got.push(line));
    assert.throws(() => push('{"a":1}\nnot json\n'), SyntaxError);
    assert.deepEqual(got, [{ a: 1 }]);
  });
});
