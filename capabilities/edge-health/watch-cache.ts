// Objects of one kind by namespace/name, kept current by a list-watch: admission and the resync
// look objects up here, never with a GET per address. The list-watch holds no objects of its own
// (kube/lean-list-watch.ts): what is cached is only what `slim` keeps.
import { Log } from "pepr";
import { orderedFeed, startFeeding, type ObjectHandler, type WatchFeed } from "../../kube/informer";
import {
  apiServerSource,
  LeanListWatch,
  type Listed,
  type ListWatchSource,
} from "../../kube/lean-list-watch";

export const keyOf = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

/** What a cache watches: a collection path and the selectors that narrow it. */
export interface Watched {
  /** `/api/v1/pods`, `/api/v1/namespaces/edge-system/pods`, `/apis/discovery.k8s.io/v1/endpointslices` */
  path: string;
  /** For log lines: "pods", "SuperEdge edge-health pods". */
  what: string;
  labelSelector?: string;
}

export class WatchCache<T extends Listed> implements WatchFeed<T> {
  readonly #objects = new Map<string, T>();
  #informer: LeanListWatch<T> | undefined;
  #stopped = false;
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
    this.#followers.push(
      orderedFeed(handle, (error, object) =>
        Log.warn(
          { ns: object.metadata?.namespace, name: object.metadata?.name, err: String(error) },
          `${this.watched.what}: handling an event failed; the resync repairs what it left`,
        ),
      ),
    );
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

  /** Lists, then watches; a watch that fails is started again (kube/informer.ts keepWatching). */
  start(source: ListWatchSource<T> = apiServerSource<T>(this.watched.path)): void {
    const { what, labelSelector } = this.watched;
    this.#stopped = false;
    this.#informer = new LeanListWatch<T>({
      source,
      selectors: labelSelector ? { labelSelector } : {},
    });
    startFeeding(this.#informer, this, {
      what,
      warn: (message, fields) => Log.warn(fields, message),
      stopped: () => this.#stopped,
    });
  }

  /** Ends the watch for good (the objects held stay). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#informer?.stop();
  }
}
