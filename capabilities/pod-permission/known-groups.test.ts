import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeConfig, ListWatch, Watch, type KubernetesObject } from "@kubernetes/client-node";
import { WatchedGroups } from "./known-groups";

const group = (namespace: string, name: string, resourceVersion = "1"): KubernetesObject => ({
  apiVersion: "bulwark.dev/v1alpha1",
  kind: "PermissionGroup",
  metadata: { namespace, name, resourceVersion },
});

/**
 * client-node's real ListWatch, its list answered by the test and its watch a stand-in that
 * hands the test the event callback instead of opening a connection.
 */
function informer(items: KubernetesObject[]) {
  const watch = new Watch(new KubeConfig());
  const events: { send?: (phase: string, object: KubernetesObject) => void } = {};
  watch.watch = (_path, _options, callback) => {
    events.send = (phase, object) => callback(phase, object, { type: phase, object });
    return Promise.resolve({ abort: () => undefined } as AbortController);
  };
  const list = () => Promise.resolve({ items, metadata: { resourceVersion: "5" } });
  const path = "/apis/bulwark.dev/v1alpha1/permissiongroups";
  return { listWatch: new ListWatch<KubernetesObject>(path, watch, list, false), events };
}

describe("WatchedGroups", () => {
  it("holds what the list and the watch deliver, and lets go of a deleted group", async () => {
    const { listWatch, events } = informer([group("shop", "readers")]);
    const groups = new WatchedGroups(() => listWatch);
    // The first question starts the watch; until its list is in, nothing is held.
    assert.equal(groups.holds("shop", "readers"), false);
    for (let tick = 0; listWatch.latestResourceVersion() === "" && tick < 100; tick++) {
      await new Promise(resolve => setImmediate(resolve));
    }
    assert.equal(groups.holds("shop", "readers"), true);
    assert.equal(groups.holds("other", "readers"), false, "namespaced: same name elsewhere");
    events.send!("ADDED", group("shop", "writers", "6"));
    assert.equal(groups.holds("shop", "writers"), true);
    events.send!("DELETED", group("shop", "readers", "7"));
    assert.equal(groups.holds("shop", "readers"), false);
    assert.equal(groups.holds("shop", "writers"), true);
  });
});
