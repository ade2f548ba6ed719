import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ScriptedClient, type ScriptedPage } from "../test/harness/scripted-client";
import { waitUntil } from "../test/harness/wait";
import { ListWatch, startedOnFirstUse, type Listed } from "./list-watch";

interface Obj extends Listed {
  data?: string;
}

const obj = (name: string, rv: string, namespace = "ns"): Obj => ({
  metadata: { namespace, name, resourceVersion: rv },
});

const BACKOFF_MS = 40;

/** A list-watch on scripted pages; `seen` records what its feed was handed: "put a@11", "remove b". */
function started(pages: (ScriptedPage<Obj> | Error)[]) {
  const client = new ScriptedClient<Obj>(pages);
  const seen: string[] = [];
  const listWatch = new ListWatch<Obj>(
    { path: "/api/v1/things", what: "things", labelSelector: "app=web" },
    {
      put: o => void seen.push(`put ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
      remove: o => void seen.push(`remove ${o.metadata?.name}`),
    },
    {
      client,
      reflector: {
        pageSize: 2,
        random: () => 0,
        backoff: { durationMs: BACKOFF_MS, factor: 1, jitter: 0, steps: 100, capMs: BACKOFF_MS },
      },
    },
  );
  listWatch.start();
  return { client, listWatch, seen };
}

const watching = (client: ScriptedClient<Obj>, count: number) =>
  waitUntil(`watch #${count}`, () => client.watches.length >= count);

describe("ListWatch", () => {
  it("lists every page with the selectors, then watches from the list's resourceVersion", async () => {
    const { client, listWatch, seen } = started([
      {
        items: [obj("a", "11"), obj("b", "12")],
        metadata: { resourceVersion: "20", continue: "p2" },
      },
      {
        items: [obj("c", "13"), obj("d", "14")],
        metadata: { resourceVersion: "20", continue: "p3" },
      },
      { items: [obj("e", "15")], metadata: { resourceVersion: "20" } },
    ]);
    await watching(client, 1);
    assert.deepEqual(client.lists, [
      { labelSelector: "app=web", limit: "2" },
      { labelSelector: "app=web", limit: "2", continue: "p2" },
      { labelSelector: "app=web", limit: "2", continue: "p3" },
    ]);
    assert.deepEqual(client.watches[0]?.query, {
      labelSelector: "app=web",
      watch: "true",
      allowWatchBookmarks: "true",
      timeoutSeconds: "300",
      resourceVersion: "20",
    });
    assert.deepEqual(seen, ["put a@11", "put b@12", "put c@13", "put d@14", "put e@15"]);
    assert.equal(listWatch.size, 5);
    assert.equal(listWatch.listed, true);
    await listWatch.stop();
  });

  it("hands on watch events; a bookmark moves the resourceVersion the next watch starts from", async () => {
    const { client, listWatch, seen } = started([
      { items: [obj("a", "1")], metadata: { resourceVersion: "5" } },
    ]);
    await watching(client, 1);
    const watch = client.watches[0]!;
    watch.send("ADDED", obj("b", "6"));
    watch.send("MODIFIED", obj("a", "7"));
    watch.send("DELETED", obj("b", "8"));
    watch.send("BOOKMARK", { metadata: { resourceVersion: "30" } });
    // The API server's timeoutSeconds ran out: watch again from where it stopped, no list.
    watch.end();
    await watching(client, 2);
    assert.deepEqual(seen, ["put a@1", "put b@6", "put a@7", "remove b"]);
    assert.equal(client.lists.length, 1);
    assert.equal(client.watches[1]?.query.resourceVersion, "30");
    assert.equal(listWatch.size, 1);
    await listWatch.stop();
  });

  it("relists after 410 Gone, and tells only what changed meanwhile", async () => {
    const { client, listWatch, seen } = started([
      { items: [obj("a", "1"), obj("b", "2")], metadata: { resourceVersion: "5", continue: "p2" } },
      { items: [obj("c", "3")], metadata: { resourceVersion: "5" } },
      // After 410: a unchanged, b gone, c changed, d new.
      {
        items: [obj("a", "1"), obj("c", "40")],
        metadata: { resourceVersion: "50", continue: "q2" },
      },
      { items: [obj("d", "41")], metadata: { resourceVersion: "50" } },
    ]);
    await watching(client, 1);
    seen.length = 0;
    client.watches[0]!.send("ERROR", { kind: "Status", code: 410, reason: "Expired" });
    await watching(client, 2);
    assert.deepEqual(seen, ["put c@40", "put d@41", "remove b"]);
    assert.equal(client.lists[2]?.continue, undefined, "the relist starts from the first page");
    assert.equal(client.watches[1]?.query.resourceVersion, "50");
    assert.equal(listWatch.size, 3);
    await listWatch.stop();
  });

  it("a list that fails midway is listed again from its first page; nothing is handed on twice", async () => {
    const { client, listWatch, seen } = started([
      { items: [obj("a", "1"), obj("b", "2")], metadata: { resourceVersion: "5", continue: "p2" } },
      new Error("connection reset"),
      // The list again: b was deleted meanwhile, c is new.
      { items: [obj("a", "1"), obj("c", "3")], metadata: { resourceVersion: "6" } },
    ]);
    await watching(client, 1);
    assert.deepEqual(seen, ["put a@1", "put b@2", "put c@3", "remove b"]);
    assert.equal(client.lists.length, 3);
    assert.equal(client.watches[0]?.query.resourceVersion, "6");
    assert.equal(listWatch.size, 2);
    await listWatch.stop();
  });

  it("a failed watch is opened again from its resourceVersion after a backoff, with no relist", async () => {
    const { client, listWatch } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await watching(client, 1);
    client.watches[0]!.send("ADDED", obj("a", "6"));
    client.watches[0]!.send("ERROR", { kind: "Status", code: 500, message: "etcd unavailable" });
    const failedAt = performance.now();
    await watching(client, 2);
    assert.ok(performance.now() - failedAt >= BACKOFF_MS - 5, "after the backoff");
    assert.equal(client.lists.length, 1);
    assert.equal(client.watches[1]?.query.resourceVersion, "6");
    assert.equal(listWatch.listed, true);
    await listWatch.stop();
  });

  it("a watch that closes at once with no event is a failure (backoff), not a loop", async () => {
    const { client, listWatch } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await watching(client, 1);
    const closedAt = performance.now();
    client.watches[0]!.end();
    await watching(client, 2);
    assert.ok(performance.now() - closedAt >= BACKOFF_MS - 5, "after the backoff");
    assert.equal(client.watches[1]?.query.resourceVersion, "5");
    await listWatch.stop();
  });

  it("a server that closes every watch at once is asked less and less often", async () => {
    const client = new ScriptedClient<Obj>([{ items: [], metadata: { resourceVersion: "5" } }]);
    const listWatch = new ListWatch<Obj>(
      { path: "/api/v1/things", what: "things" },
      { put() {}, remove() {} },
      {
        client,
        reflector: {
          random: () => 0,
          backoff: { durationMs: BACKOFF_MS, factor: 2, jitter: 0, steps: 100, capMs: 10_000 },
        },
      },
    );
    listWatch.start();
    const opened: number[] = [];
    for (let count = 1; count <= 4; count++) {
      await watching(client, count);
      opened.push(performance.now());
      client.watches[count - 1]!.end();
    }
    const waits = opened.slice(1).map((at, i) => at - opened[i]!);
    assert.ok(waits[0]! >= BACKOFF_MS - 5, `first wait ${waits[0]}`);
    assert.ok(waits[1]! >= 2 * BACKOFF_MS - 5, `second wait ${waits[1]}: doubled`);
    assert.ok(waits[2]! >= 4 * BACKOFF_MS - 5, `third wait ${waits[2]}: doubled again`);
    await listWatch.stop();
  });

  it("retries a failed list until one answers", async () => {
    const { client, listWatch, seen } = started([
      new Error("connection refused"),
      new Error("connection refused"),
      { items: [obj("a", "1")], metadata: { resourceVersion: "5" } },
    ]);
    assert.equal(listWatch.listed, false);
    await watching(client, 1);
    assert.equal(client.lists.length, 3);
    assert.deepEqual(seen, ["put a@1"]);
    assert.equal(listWatch.listed, true);
    await listWatch.stop();
  });

  it("synced() settles once a list is in, not on a failed one", async () => {
    const { client, listWatch, seen } = started([
      new Error("connection refused"),
      { items: [obj("a", "1")], metadata: { resourceVersion: "5", continue: "p2" } },
      { items: [obj("b", "2")], metadata: { resourceVersion: "5" } },
    ]);
    let synced = false;
    void listWatch.synced().then(() => (synced = true));
    await waitUntil("the failed list", () => client.lists.length >= 1);
    assert.equal(synced, false);
    await waitUntil("synced", () => synced);
    assert.equal(client.lists.length, 3, "after the failed list and both pages");
    assert.deepEqual(seen, ["put a@1", "put b@2"]);
    await listWatch.stop();
  });

  it("stop aborts the watch and opens nothing more", async () => {
    const { client, listWatch } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await watching(client, 1);
    await listWatch.stop();
    assert.equal(client.watches[0]!.aborted, true);
    await new Promise(resolve => setTimeout(resolve, BACKOFF_MS * 2));
    assert.deepEqual([client.lists.length, client.watches.length], [1, 1]);
  });

  it("keeps no object: what the feed drops is collected", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { client, listWatch } = started([{ items: [], metadata: { resourceVersion: "5" } }]);
    await watching(client, 1);
    // Made in a function of their own, so that no stack slot of this one still points at one.
    const sendMany = (): WeakRef<Obj>[] =>
      Array.from({ length: 200 }, (_, i) => {
        const object: Obj = { ...obj(`pod-${i}`, String(10 + i)), data: "x".repeat(10_000) };
        client.watches[0]!.send(i % 2 ? "MODIFIED" : "ADDED", object);
        return new WeakRef(object);
      });
    const refs = sendMany();
    await new Promise(resolve => setImmediate(resolve));
    gc();
    assert.equal(refs.filter(ref => ref.deref() !== undefined).length, 0);
    assert.equal(listWatch.size, 200, "their keys and versions are kept");
    await listWatch.stop();
  });
});

describe("startedOnFirstUse", () => {
  it("makes and starts the list-watch on the first call only", async () => {
    const client = new ScriptedClient<Obj>([{ items: [], metadata: { resourceVersion: "1" } }]);
    let made = 0;
    const use = startedOnFirstUse(() => {
      made++;
      return new ListWatch<Obj>({ path: "/x", what: "x" }, { put() {}, remove() {} }, { client });
    });
    assert.equal(made, 0, "nothing before the first use");
    const first = use();
    assert.equal(use(), first);
    assert.equal(made, 1);
    await waitUntil("its list", () => first.listed);
    assert.equal(client.lists.length, 1);
    await first.stop();
  });
});
