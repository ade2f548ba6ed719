import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubernetesObject } from "@kubernetes/client-node";
import type { ListWatch } from "../../kube/list-watch";
import { ScriptedClient } from "../../test/harness/scripted-client";
import { waitUntil } from "../../test/harness/wait";
import { groupListWatch, WatchedGroups } from "./known-groups";

const group = (namespace: string, name: string, resourceVersion = "1"): KubernetesObject => ({
  apiVersion: "bulwark.dev/v1alpha1",
  kind: "PermissionGroup",
  metadata: { namespace, name, resourceVersion },
});

describe("WatchedGroups", () => {
  it("holds what the list and the watch deliver, and lets go of a deleted group", async () => {
    const source = new ScriptedClient<KubernetesObject>([
      { items: [group("shop", "readers")], metadata: { resourceVersion: "5" } },
    ]);
    let listWatch: ListWatch<KubernetesObject> | undefined;
    const groups = new WatchedGroups(
      (feed, who) => (listWatch = groupListWatch(feed, who, { client: source })),
    );
    // The first question starts the watch; until its list is in, nothing is held.
    assert.equal(groups.holds("shop", "readers"), false);
    await waitUntil("the watch", () => source.watches.length > 0);
    assert.deepEqual(source.listPaths, ["/apis/bulwark.dev/v1alpha1/permissiongroups"]);
    const events = source.current;
    assert.equal(groups.holds("shop", "readers"), true);
    assert.equal(groups.holds("other", "readers"), false, "namespaced: same name elsewhere");
    events.send("ADDED", group("shop", "writers", "6"));
    assert.equal(groups.holds("shop", "writers"), true);
    events.send("DELETED", group("shop", "readers", "7"));
    assert.equal(groups.holds("shop", "readers"), false);
    assert.equal(groups.holds("shop", "writers"), true);
    await listWatch?.stop();
  });
});
