import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { orderedFeed } from "./informer";

describe("orderedFeed", () => {
  const thing = (name: string, version: string) => ({
    metadata: { namespace: "ns", name },
    version,
  });
  const tick = () => new Promise(resolve => setImmediate(resolve));

  it("runs one object's events in order, each after the last settled; other objects do not wait", async () => {
    const log: string[] = [];
    const release = new Map<string, () => void>();
    const feed = orderedFeed<ReturnType<typeof thing>>(
      (object, deleted) =>
        new Promise<void>(resolve => {
          const label = `${deleted ? "delete" : "put"} ${object.metadata.name}@${object.version}`;
          log.push(`start ${label}`);
          release.set(label, () => (log.push(`end ${label}`), resolve()));
        }),
      () => assert.fail("no handler fails here"),
    );
    feed.put(thing("a", "1"));
    feed.remove(thing("a", "2"));
    feed.put(thing("b", "1"));
    await tick();
    assert.deepEqual(log, ["start put a@1", "start put b@1"], "a's delete waits; b does not");
    release.get("put a@1")!();
    await tick();
    assert.deepEqual(log.slice(2), ["end put a@1", "start delete a@2"]);
    release.get("delete a@2")!();
    release.get("put b@1")!();
    await feed.idle();
    assert.equal(log.length, 6);
  });

  it("reports a failed handler with its object, and the object's next event still runs", async () => {
    const failures: string[] = [];
    const handled: string[] = [];
    const feed = orderedFeed<ReturnType<typeof thing>>(
      object => {
        if (object.version === "1") throw new Error("conflict");
        handled.push(object.version);
      },
      (error, object) => failures.push(`${object.metadata.name}: ${(error as Error).message}`),
    );
    feed.put(thing("a", "1"));
    feed.put(thing("a", "2"));
    await feed.idle();
    assert.deepEqual(failures, ["a: conflict"]);
    assert.deepEqual(handled, ["2"]);
  });
});
