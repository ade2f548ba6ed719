import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScriptedClient } from "../../test/harness/scripted-client";
import { waitUntil } from "../../test/harness/wait";
import type { Pod } from "../../core/edge";
import { slimPod } from "./protection";
import { WatchCache } from "./watch-cache";

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
    const cache = new WatchCache<Pod>({ path: "/api/v1/pods", what: "pods" }, slimPod);
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
});
