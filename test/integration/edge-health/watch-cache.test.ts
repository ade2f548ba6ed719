// The list-watch under edge health's caches and admission's indexes (kube/list-watch.ts), on the
// real API server: paged lists with continue tokens, the watch from the list's resourceVersion,
// and a relist that tells what was deleted and created while no watch was open, and nothing else.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { slimPod } from "../../../core/edge";
import { WatchCache } from "../../../kube/watch-cache";
import type { Pod } from "../../../core/edge";
import { ApiClient, type ListWatchClient } from "../../../kube/api-client";
import { KeyedFeedSink, type Listed } from "../../../kube/list-watch";
import { Reflector } from "../../../kube/reflector";
import { testCluster, testNamespace } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";

const cluster = testCluster();

describe("ListWatch and WatchCache on the API server", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "lean-watch");
  });
  after(() => removeNamespace());

  const configMap = (name: string, value = "1") => ({
    metadata: { name, namespace: ns, labels: { watched: "yes" } },
    data: { value },
  });

  it("pages the list, follows the watch, and after a restart tells only what changed", async () => {
    for (let i = 0; i < 8; i++) {
      await cluster.core.createNamespacedConfigMap({ namespace: ns, body: configMap(`cm-${i}`) });
    }
    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "unwatched", namespace: ns }, data: {} },
    });
    const api = new ApiClient(cluster.kc);
    const lists: URLSearchParams[] = [];
    const client: ListWatchClient = {
      getJson: (path, timeoutMs, signal) => {
        lists.push(new URL(path, "http://x").searchParams);
        return api.getJson(path, timeoutMs, signal);
      },
      stream: (path, onLine, timing) => api.stream(path, onLine, timing),
    };
    const seen: string[] = [];
    const sink = new KeyedFeedSink<Listed>({
      put: o => void seen.push(`put ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
      remove: o => void seen.push(`remove ${o.metadata?.name}`),
    });
    // A relist is a reflector's list on a sink that holds what the last one listed.
    const reflect = (): Reflector => {
      const reflector = new Reflector(
        client,
        {
          name: "configmaps",
          path: `/api/v1/namespaces/${ns}/configmaps`,
          query: { labelSelector: "watched=yes" },
        },
        sink,
        { pageSize: 3 },
      );
      reflector.start();
      return reflector;
    };
    const first = reflect();
    await waitUntil("the list", () => first.status().synced);
    assert.equal(lists.length, 3, "8 objects in pages of 3");
    assert.ok(lists[1]?.get("continue") && lists[2]?.get("continue"), "pages 2 and 3 continue");
    const named = () => seen.map(line => line.replace(/@.*/, ""));
    assert.deepEqual(
      named().sort(),
      [0, 1, 2, 3, 4, 5, 6, 7].map(i => `put cm-${i}`),
    );
    await waitUntil("the watch", () => first.status().watching);

    seen.length = 0;
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm-new") });
    await cluster.core.replaceNamespacedConfigMap({
      namespace: ns,
      name: "cm-0",
      body: configMap("cm-0", "2"),
    });
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-1" });
    await waitUntil("the watch's three events", () => seen.length >= 3);
    assert.deepEqual(named(), ["put cm-new", "put cm-0", "remove cm-1"]);

    await first.stop();
    seen.length = 0;
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-2" });
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm-late") });
    const second = reflect();
    await waitUntil("the relist", () => second.status().synced);
    assert.deepEqual(named(), ["put cm-late", "remove cm-2"], "the relist: only the changes");
    assert.equal(sink.size, 8);
    await second.stop();
  });

  it("a pod cache holds pods slimmed, follows their deletion, and keeps nothing else", async () => {
    const cache = new WatchCache<Pod>(
      { path: `/api/v1/namespaces/${ns}/pods`, what: "pods" },
      { slim: slimPod },
    );
    cache.start(new ApiClient(cluster.kc));
    await cluster.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "web-0", annotations: { big: "x".repeat(4096) } },
        spec: {
          nodeName: "edge-a",
          containers: [{ name: "app", image: "registry.example/app:1" }],
        },
      },
    });
    const held = await waitUntil("the pod in the cache", () => cache.get("web-0", ns));
    assert.deepEqual(held, slimPod(held));
    assert.equal(held.spec?.nodeName, "edge-a");
    assert.equal((held.metadata as { annotations?: unknown }).annotations, undefined);
    await cluster.core.deleteNamespacedPod({ namespace: ns, name: "web-0", gracePeriodSeconds: 0 });
    await waitUntil("the pod gone from the cache", () => cache.get("web-0", ns) === undefined);
    await cache.stop();
  });
});
