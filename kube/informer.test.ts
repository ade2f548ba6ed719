import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { orderedFeed, keepWatching, type Restartable } from "./informer";

/** An informer that records starts and lets the test emit its events. */
class FakeInformer implements Restartable {
  starts = 0;
  readonly #callbacks = new Map<string, ((error?: unknown) => void)[]>();
  on(verb: "error" | "connect", callback: (error?: unknown) => void): void {
    this.#callbacks.set(verb, [...(this.#callbacks.get(verb) ?? []), callback]);
  }
  emit(verb: "error" | "connect", error?: unknown): void {
    for (const callback of this.#callbacks.get(verb) ?? []) callback(error);
  }
  start(): Promise<void> {
    this.starts++;
    return Promise.resolve();
  }
}

function harness(stopped = () => false) {
  const informer = new FakeInformer();
  const timers: { run: () => void; ms: number }[] = [];
  const warnings: Record<string, unknown>[] = [];
  keepWatching(informer, {
    what: "pods",
    warn: (_message, fields) => void warnings.push(fields),
    stopped,
    random: () => 0,
    setTimer: (run, ms) => void timers.push({ run, ms }),
  });
  return { informer, timers, warnings };
}

describe("keepWatching", () => {
  it("restarts the informer after an error, once the backoff's wait has passed", () => {
    const { informer, timers, warnings } = harness();
    informer.emit("error", new Error("watch closed"));
    assert.equal(informer.starts, 0, "not before the wait");
    assert.deepEqual(
      timers.map(t => t.ms),
      [1000],
    );
    timers[0]?.run();
    assert.equal(informer.starts, 1);
    assert.deepEqual(warnings, [{ what: "pods", retryMs: 1000, err: "watch closed" }]);
  });
  it("doubles the wait for failures in a row up to 30 s, and starts over after a connect", () => {
    const { informer, timers } = harness();
    for (let i = 0; i < 7; i++) informer.emit("error", new Error("refused"));
    assert.deepEqual(
      timers.map(t => t.ms),
      [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000],
    );
    informer.emit("connect");
    informer.emit("error", new Error("refused"));
    assert.equal(timers.at(-1)?.ms, 1000);
  });
  it("does not restart an informer its owner stopped, whether before the error or during the wait", () => {
    let stopped = false;
    const { informer, timers } = harness(() => stopped);
    informer.emit("error", new Error("closed"));
    stopped = true;
    timers[0]?.run();
    informer.emit("error", new Error("closed again"));
    assert.equal(informer.starts, 0);
    assert.equal(timers.length, 1);
  });
});

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
