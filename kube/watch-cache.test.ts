import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScriptedClient } from "../test/harness/scripted-client";
import { waitUntil } from "../test/harness/wait";
import type { Pod } from "../core/edge";
import { WatchCache } from "./watch-cache";

/** A reader that needs only where a pod runs. */
const slimPod = (pod: Pod): Pod => ({
  metadata: { namespace: pod.metadata?.namespace, name: pod.metadata?.name },
  spec: { nodeName: pod.spec?.nodeName },
});

const pod = (name: string, rv: string, nodeName = "edge-a"): Pod => ({
  metadata: { namespace: "shop", name, resourceVersion: rv, annotations: { big: "x".repeat(100) } },
  spec: { nodeName },
});
const settle = () => new Promise(resolve => setImmediate(resolve));

describe("WatchCache", () => {
  it("holds each object slimmed, and its followers see every event once the cache has it", async () => {
    const source = new ScriptedClient<Pod>([
      { items: [pod("a", "1")], metadata: { resourceVersion: "5" } },
    ]);
    const cache = new WatchCache<Pod>({ path: "/api/v1/pods", what: "pods" }, { slim: slimPod });
    const seen: string[] = [];
    cache.follow((object, deleted) => {
      const held = cache.get(object.metadata?.name ?? "", "shop");
      seen.push(
        `${deleted ? "deleted" : "put"} ${object.metadata?.name} held:${held?.spec?.nodeName ?? "-"}`,
      );
    });
    cache.start(source);
    await waitUntil("the watch", () => source.watches.length > 0);
    assert.equal(cache.listed, true);
    source.current.send("MODIFIED", pod("a", "6", "edge-b"));
    await settle();
    source.current.send("DELETED", pod("a", "7", "edge-b"));
    await settle();
    assert.deepEqual(seen, ["put a held:edge-a", "put a held:edge-b", "deleted a held:-"]);
    source.current.send("ADDED", pod("b", "8"));
    await settle();
    assert.deepEqual(cache.get("b", "shop"), slimPod(pod("b", "8")));
    assert.equal(
      (cache.get("b", "shop")?.metadata as { annotations?: unknown }).annotations,
      undefined,
    );
    await cache.stop();
    assert.equal(source.current.aborted, true);
  });

  it("hands a follower only the objects it asks for, and starts once however often started", async () => {
    const source = new ScriptedClient<Pod>([
      { items: [pod("a", "1"), pod("b", "2")], metadata: { resourceVersion: "5" } },
    ]);
    const cache = new WatchCache<Pod>({ path: "/api/v1/pods", what: "pods" });
    const all: string[] = [];
    const onlyB: string[] = [];
    cache.follow(object => void all.push(object.metadata?.name ?? ""));
    cache.follow(
      (object, deleted) => void onlyB.push(`${deleted ? "-" : "+"}${object.metadata?.name}`),
      object => object.metadata?.name === "b",
    );
    cache.start(source);
    cache.start(source);
    await cache.synced();
    source.current.send("DELETED", pod("b", "6"));
    source.current.send("MODIFIED", pod("a", "7"));
    await waitUntil("the events handled", () => all.length === 4);
    await settle();
    assert.deepEqual(all.sort(), ["a", "a", "b", "b"]);
    assert.deepEqual(onlyB, ["+b", "-b"]);
    assert.equal(source.lists.length, 1, "one list: the second start() did nothing");
    // Both followers saw the objects the cache holds, whichever they took.
    assert.equal(cache.get("a", "shop")?.metadata?.resourceVersion, "7");
    await cache.stop();
  });

  it("logs a follower's failure with the object's name through the log it is given, and goes on", async () => {
    const source = new ScriptedClient<Pod>([
      { items: [pod("a", "1")], metadata: { resourceVersion: "5" } },
    ]);
    const lines: string[] = [];
    const cache = new WatchCache<Pod>(
      { path: "/api/v1/pods", what: "pods" },
      {
        log: (level, message, fields) =>
          lines.push(`${level} ${message} ${JSON.stringify(fields)}`),
      },
    );
    const handled: string[] = [];
    cache.follow(object => {
      handled.push(object.metadata?.resourceVersion ?? "");
      if (object.metadata?.resourceVersion === "1") throw new Error("boom");
    });
    cache.start(source);
    await cache.synced();
    source.current.send("MODIFIED", pod("a", "6"));
    await waitUntil("both events handled", () => handled.length === 2);
    const failure = lines.find(line => line.startsWith("warn pods: handling an event failed"));
    assert.match(failure ?? "", /"ns":"shop","name":"a","err":"Error: boom"/);
    assert.ok(
      lines.some(line => line.startsWith("info listed")),
      "the loop logs there too",
    );
    await cache.stop();
  });
});
