// The list-watch under edge health's caches (kube/lean-list-watch.ts), on the real API server:
// paged lists with continue tokens, the watch from the list's resourceVersion, and a restart
// that tells what was deleted and created while no watch was open, and nothing else.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { slimPod } from "../../../capabilities/edge-health/protection";
import { WatchCache } from "../../../capabilities/edge-health/watch-cache";
import type { Pod } from "../../../core/edge";
import { apiServerSource, LeanListWatch, type Listed } from "../../../kube/lean-list-watch";
import { testCluster, testNamespace } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";

const cluster = testCluster();

describe("LeanListWatch and WatchCache on the API server", () => {
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
    const source = apiServerSource<Listed>(`/api/v1/namespaces/${ns}/configmaps`, cluster.kc);
    const lists: Record<string, string>[] = [];
    const informer = new LeanListWatch<Listed>({
      source: { ...source, list: query => (lists.push(query), source.list(query)) },
      selectors: { labelSelector: "watched=yes" },
      pageSize: 3,
    });
    const seen: string[] = [];
    for (const verb of ["add", "update", "delete"] as const) {
      informer.on(verb, o => seen.push(`${verb} ${o.metadata?.name}`));
    }
    await informer.start();
    assert.equal(lists.length, 3, "8 objects in pages of 3");
    assert.ok(lists[1]?.continue && lists[2]?.continue, "pages 2 and 3 continue the list");
    assert.deepEqual(
      seen.sort(),
      [0, 1, 2, 3, 4, 5, 6, 7].map(i => `add cm-${i}`),
    );

    seen.length = 0;
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm-new") });
    await cluster.core.replaceNamespacedConfigMap({
      namespace: ns,
      name: "cm-0",
      body: configMap("cm-0", "2"),
    });
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-1" });
    await waitUntil("the watch's three events", () => seen.length >= 3);
    assert.deepEqual(seen, ["add cm-new", "update cm-0", "delete cm-1"]);

    await informer.stop();
    seen.length = 0;
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-2" });
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm-late") });
    await informer.start();
    assert.deepEqual(seen.sort(), ["add cm-late", "delete cm-2"]);
    assert.equal(informer.size, 8);
    await informer.stop();
  });

  it("a pod cache holds pods slimmed, follows their deletion, and keeps nothing else", async () => {
    const cache = new WatchCache<Pod>(
      { path: `/api/v1/namespaces/${ns}/pods`, what: "pods" },
      slimPod,
    );
    cache.start(apiServerSource(`/api/v1/namespaces/${ns}/pods`, cluster.kc));
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
