// Objects of one kind by namespace/name, kept current by a list-watch: admission and the resync
// look objects up here, never with a GET per address. The list-watch holds no objects of its own
// (kube/list-watch.ts): what is cached is only what `slim` keeps.
import type { ListWatchClient } from "../../kube/api-client";
import type { ObjectHandler, WatchFeed } from "../../kube/informer";
import type { ListWatch, Listed, Watched } from "../../kube/list-watch";
import { moduleListWatch, orderedHandling } from "../pepr/watches";

export const keyOf = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

export class WatchCache<T extends Listed> implements WatchFeed<T> {
  readonly #objects = new Map<string, T>();
  #listWatch: ListWatch<T> | undefined;
  readonly #followers: WatchFeed<T>[] = [];

  /**
   * @param slim keeps what the readers need of each object (a pod cache of every pod in the
   *   cluster holds a few fields each, not whole specs).
   */
  constructor(
    readonly watched: Watched,
    readonly slim: (object: T) => T = object => object,
  ) {}

  get(name: string, namespace?: string): T | undefined {
    return this.#objects.get(keyOf(namespace, name));
  }

  all(): T[] {
    return [...this.#objects.values()];
  }

  /**
   * Calls `handle` with each object listed, added, changed or deleted, after the cache took the
   * change (by then it may hold a later one: `handle` gets the event's object). One object's
   * events run in order, as Pepr's watch queue did. Register before start() to see the first list.
   */
  follow(handle: ObjectHandler<T>): void {
    this.#followers.push(orderedHandling(this.watched.what, handle));
  }

  put(object: T): void {
    const name = object.metadata?.name;
    if (!name) return;
    this.#objects.set(keyOf(object.metadata?.namespace, name), this.slim(object));
    for (const follower of this.#followers) follower.put(object);
  }

  remove(object: T): void {
    const name = object.metadata?.name;
    if (!name) return;
    this.#objects.delete(keyOf(object.metadata?.namespace, name));
    for (const follower of this.#followers) follower.remove(object);
  }

  /** Lists, then watches, and keeps at it (failures retried with backoff) until stop(). */
  start(client?: ListWatchClient): void {
    this.#listWatch ??= moduleListWatch(this.watched, this, client ? { client } : {});
    this.#listWatch.start();
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
