import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubernetesObject } from "@kubernetes/client-node";
import { LeanListWatch } from "../../kube/lean-list-watch";
import { ScriptedSource } from "../../test/harness/scripted-source";
import { WatchedGroups } from "./known-groups";

const group = (namespace: string, name: string, resourceVersion = "1"): KubernetesObject => ({
  apiVersion: "bulwark.dev/v1alpha1",
  kind: "PermissionGroup",
  metadata: { namespace, name, resourceVersion },
});

describe("WatchedGroups", () => {
  it("holds what the list and the watch deliver, and lets go of a deleted group", async () => {
    const source = new ScriptedSource<KubernetesObject>([
      { items: [group("shop", "readers")], metadata: { resourceVersion: "5" } },
    ]);
    const groups = new WatchedGroups(() => new LeanListWatch({ source }));
    // The first question starts the watch; until its list is in, nothing is held.
    assert.equal(groups.holds("shop", "readers"), false);
    for (let tick = 0; source.watches.length === 0 && tick < 100; tick++) {
      await new Promise(resolve => setImmediate(resolve));
    }
    const events = source.current;
    assert.equal(groups.holds("shop", "readers"), true);
    assert.equal(groups.holds("other", "readers"), false, "namespaced: same name elsewhere");
    events.send("ADDED", group("shop", "writers", "6"));
    assert.equal(groups.holds("shop", "writers"), true);
    events.send("DELETED", group("shop", "readers", "7"));
    assert.equal(groups.holds("shop", "readers"), false);
    assert.equal(groups.holds("shop", "writers"), true);
  });
});
