import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ScriptedSource } from "../test/harness/scripted-source";
import { LeanListWatch, type ListPage, type Listed } from "./lean-list-watch";

interface Obj extends Listed {
  data?: string;
}

const obj = (name: string, rv: string, namespace = "ns"): Obj => ({
  metadata: { namespace, name, resourceVersion: rv },
});

/** Every event the informer emitted, as "verb name@rv" (or "verb" for status events). */
function record(informer: LeanListWatch<Obj>): string[] {
  const seen: string[] = [];
  for (const verb of ["add", "update", "delete"] as const) {
    informer.on(verb, o => seen.push(`${verb} ${o.metadata?.name}@${o.metadata?.resourceVersion}`));
  }
  informer.on("connect", () => seen.push("connect"));
  informer.on("error", e => seen.push(`error ${e instanceof Error ? e.message : String(e)}`));
  return seen;
}

const settle = () => new Promise(resolve => setImmediate(resolve));

function started(pages: (ListPage<Obj> | Error)[], options: { now?: () => number } = {}) {
  const source = new ScriptedSource<Obj>(pages);
  const informer = new LeanListWatch<Obj>({
    source,
    selectors: { labelSelector: "app=web" },
    pageSize: 2,
    watchSeconds: () => 420,
    now: options.now ?? (() => 0),
  });
  const seen = record(informer);
  return { source, informer, seen };
}

describe("LeanListWatch", () => {
  it("lists every page with the selectors, then watches from the list's resourceVersion", async () => {
    const { source, informer, seen } = started([
      {
        items: [obj("a", "11"), obj("b", "12")],
        metadata: { resourceVersion: "20", continue: "p2" },
      },
      {
        items: [obj("c", "13"), obj("d", "14")],
        metadata: { resourceVersion: "", continue: "p3" },
      },
      { items: [obj("e", "15")], metadata: {} },
    ]);
    await informer.start();
    assert.deepEqual(source.lists, [
      { labelSelector: "app=web", limit: "2" },
      { labelSelector: "app=web", limit: "2", continue: "p2" },
      { labelSelector: "app=web", limit: "2", continue: "p3" },
    ]);
    assert.deepEqual(source.watches[0]?.query, {
      labelSelector: "app=web",
      allowWatchBookmarks: "true",
      timeoutSeconds: "420",
      resourceVersion: "20",
    });
    assert.deepEqual(seen, ["add a@11", "add b@12", "add c@13", "add d@14", "add e@15", "connect"]);
    assert.equal(informer.size, 5);
  });

  it("hands on watch events; a bookmark moves the resourceVersion the next watch starts from", async () => {
    const { source, informer, seen } = started([
      { items: [obj("a", "1")], metadata: { resourceVersion: "5" } },
    ]);
    await informer.start();
    const watch = source.watches[0]!;
    watch.send("ADDED", obj("b", "6"));
    watch.send("MODIFIED", obj("a", "7"));
    watch.send("DELETED", obj("b", "8"));
    watch.send("BOOKMARK", { metadata: { resourceVersion: "30" } });
    // The API server's timeoutSeconds ran out: watch again from where it stopped, no list.
    watch.end();
    await settle();
    assert.deepEqual(seen, [
      "add a@1",
      "connect",
      "add b@6",
      "update a@7",
      "delete b@8",
      "connect",
    ]);
    assert.equal(source.lists.length, 1);
    assert.equal(source.watches[1]?.query.resourceVersion, "30");
    assert.equal(informer.size, 1);
  });

  it("relists after 410 Gone without an error, and tells only what changed meanwhile", async () => {
    const { source, informer, seen } = started([
      { items: [obj("a", "1"), obj("b", "2")], metadata: { resourceVersion: "5", continue: "p2" } },
      { items: [obj("c", "3")], metadata: {} },
      // After 410: a unchanged, b gone, c changed, d new.
      {
        items: [obj("a", "1"), obj("c", "40")],
        metadata: { resourceVersion: "50", continue: "q2" },
      },
      { items: [obj("d", "41")], metadata: {} },
    ]);
    await informer.start();
    seen.length = 0;
    source.watches[0]!.send("ERROR", { kind: "Status", code: 410, reason: "Expired" });
    source.watches[0]!.end();
    await settle();
    await settle();
    assert.deepEqual(seen, ["update c@40", "add d@41", "delete b@undefined", "connect"]);
    assert.equal(source.lists[2]?.continue, undefined, "the relist starts from the first page");
    assert.equal(source.watches[1]?.query.resourceVersion, "50");
    assert.equal(informer.size, 3);
  });

  it("a watch refused or failed is an error event, and no watch is opened again by itself", async () => {
    const { source, informer, seen } = started([
      { items: [], metadata: { resourceVersion: "5" } },
      { items: [], metadata: { resourceVersion: "6" } },
    ]);
    source.refuseNextWatch = Object.assign(new Error("Forbidden"), { statusCode: 403 });
    await informer.start();
    assert.deepEqual(seen, ["error Forbidden"]);
    // keepWatching starts it again later: a new list, then a watch.
    await informer.start();
    source.watches[1]!.send("ERROR", { kind: "Status", code: 500, message: "etcd unavailable" });
    source.watches[1]!.end();
    await settle();
    assert.match(seen.at(-1)!, /^error watch ended: .*etcd unavailable/);
    assert.equal(source.watches.length, 2);
  });

  it("a watch that closes at once with no event is an error, not a loop", async () => {
    const { source, informer, seen } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await informer.start();
    source.watches[0]!.end();
    await settle();
    assert.deepEqual(seen, ["connect", "error watch closed at once, with no event"]);
    assert.equal(source.watches.length, 1);
  });

  it("a failed list is an error event; start does not reject", async () => {
    const { source, informer, seen } = started([new Error("connection refused")]);
    await informer.start();
    assert.deepEqual(seen, ["error connection refused"]);
    assert.equal(source.watches.length, 0);
  });

  it("stop aborts the watch; what that watch still sends is ignored and it is not reopened", async () => {
    const { source, informer, seen } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await informer.start();
    await informer.stop();
    const watch = source.watches[0]!;
    assert.equal(watch.aborted, true);
    watch.send("ADDED", obj("late", "9"));
    await settle();
    assert.deepEqual(seen, ["connect"]);
    assert.equal(source.watches.length, 1);
  });

  it("keeps no object: what the handlers drop is collected", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { source, informer } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await informer.start();
    // Made in a function of their own, so that no stack slot of this one still points at one.
    const sendMany = (): WeakRef<Obj>[] =>
      Array.from({ length: 200 }, (_, i) => {
        const object: Obj = { ...obj(`pod-${i}`, String(10 + i)), data: "x".repeat(10_000) };
        source.watches[0]!.send(i % 2 ? "MODIFIED" : "ADDED", object);
        return new WeakRef(object);
      });
    const refs = sendMany();
    await settle();
    gc();
    assert.equal(refs.filter(ref => ref.deref() !== undefined).length, 0);
    assert.equal(informer.size, 200, "their keys and versions are kept");
  });
});
