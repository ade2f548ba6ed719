// Objects of one kind by namespace/name, kept current by a list-watch: readers look objects up
// here, never with a GET per address. The list-watch holds no objects of its own
// (list-watch.ts): what is cached is only what `slim` keeps. Pepr-free: the module (edge health's
// caches) and the edge daemon (its Nodes and zone ConfigMap) both run on it.
import type { ListWatchClient } from "./api-client";
import { orderedFeed, type ObjectHandler, type WatchFeed } from "./informer";
import { ListWatch, type Listed, type Watched } from "./list-watch";
import type { ReflectorOptions } from "./reflector";
import { namespacedName, objectKey } from "../core/object-key";

export interface WatchCacheOptions<T> {
  /** What readers need of each object (a cache of every pod holds a few fields each). */
  slim?: (object: T) => T;
  /** The loop's log lines and a follower's failures. */
  log?: ReflectorOptions["log"];
}

/**
 * `handle` for each of an object's events, one at a time and in order; a failure is logged with
 * the object's namespace/name (the resync, or the next event, repairs what it left).
 */
export function loggedOrderedFeed<T extends Listed>(
  what: string,
  handle: ObjectHandler<T>,
  log: ReflectorOptions["log"],
): WatchFeed<T> & { idle(): Promise<void> } {
  return orderedFeed<T>(handle, (error, object) =>
    log("warn", `${what}: handling an event failed; the resync repairs what it left`, {
      ns: object.metadata?.namespace,
      name: object.metadata?.name,
      err: String(error),
    }),
  );
}

export class WatchCache<T extends Listed> implements WatchFeed<T> {
  readonly #objects = new Map<string, T>();
  #listWatch: ListWatch<T> | undefined;
  /** Each follower's ordered feed, and which objects' events it wants (the rest skip its queue). */
  readonly #followers: { feed: WatchFeed<T>; only: (object: T) => boolean }[] = [];
  readonly #slim: (object: T) => T;
  readonly #log: ReflectorOptions["log"];

  constructor(
    readonly watched: Watched,
    options: WatchCacheOptions<T> = {},
  ) {
    this.#slim = options.slim ?? (object => object);
    this.#log = options.log ?? (() => {});
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#objects.get(namespacedName(namespace, name));
  }

  all(): T[] {
    return [...this.#objects.values()];
  }

  /**
   * Calls `handle` with each object listed, added, changed or deleted, after the cache took the
   * change (by then it may hold a later one: `handle` gets the event's object). One object's
   * events run in order, as Pepr's watch queue did. Register before start() (or in the same
   * synchronous module load: the first list arrives on a later turn) to see the first list.
   * `only`: the objects whose events `handle` wants; the others never reach its queue.
   */
  follow(handle: ObjectHandler<T>, only: (object: T) => boolean = () => true): void {
    const feed = loggedOrderedFeed(this.watched.what, handle, this.#log);
    this.#followers.push({ feed, only });
  }

  put(object: T): void {
    const name = object.metadata?.name;
    if (!name) return;
    this.#objects.set(objectKey(object), this.#slim(object));
    for (const { feed, only } of this.#followers) if (only(object)) feed.put(object);
  }

  remove(object: T): void {
    const name = object.metadata?.name;
    if (!name) return;
    this.#objects.delete(objectKey(object));
    for (const { feed, only } of this.#followers) if (only(object)) feed.remove(object);
  }

  /**
   * Lists, then watches, and keeps at it (failures retried with backoff) until stop(). Starting
   * again does nothing: every reader of a shared cache may start it.
   */
  start(client?: ListWatchClient): void {
    this.#listWatch ??= new ListWatch(this.watched, this, {
      log: this.#log,
      ...(client ? { client } : {}),
    });
    this.#listWatch.start();
  }

  /** Settles once the cache has held a complete list (after start()). */
  async synced(): Promise<void> {
    await this.#listWatch?.synced();
  }

  /** Whether the cache has held a complete list at least once. */
  get listed(): boolean {
    return this.#listWatch?.listed ?? false;
  }

  /** Ends the watch for good (the objects held stay). */
  async stop(): Promise<void> {
    await this.#listWatch?.stop();
  }
}
