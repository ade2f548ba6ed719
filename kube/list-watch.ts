// A list-watch that feeds a WatchFeed and holds no objects: kube/reflector.ts's loop, with a sink
// that hands each object on and keeps only key → resourceVersion, which tells a relist what went
// away and what it need not hand on again. client-node's ListWatch keeps every object whole, and
// the fluent client's Watch keeps its own copy by uid beside whatever its caller keeps: a process
// that watched every pod held each one twice, whole, for as long as the pod lived, and each pod
// event moved a whole pod into V8's old space (hack/bench/README.md, admission). Here an object
// lives as long as its feed keeps it: the feed keeps only what it reads.
import { defaultApiClient, type ListWatchClient } from "./api-client";
import type { WatchFeed } from "./informer";
import { Reflector, type KubeObject, type ReflectorOptions, type ReflectorSink } from "./reflector";
import { objectKey } from "../core/object-key";

/** What this reads of an object: its key and version. */
export interface Listed {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** What a list-watch watches: a collection path and the selectors that narrow it. */
export interface Watched {
  /** `/api/v1/pods`, `/api/v1/namespaces/edge-system/pods`, `/apis/discovery.k8s.io/v1/endpointslices` */
  path: string;
  /** For log lines and status: "pods", "secrets of type kubernetes.io/tls (admission)". */
  what: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListWatchOptions {
  /** The API server; the process's default client when unset. */
  client?: ListWatchClient;
  log?: ReflectorOptions["log"];
  /** Overrides for the loop (tests: short backoffs). */
  reflector?: Partial<ReflectorOptions>;
}

/** client-go's: each watch asks the API server to close it after 5 to 10 minutes. */
const WATCH_SECONDS = 300;

/** Metadata only, for an object a relist no longer finds: its feed removes it by name. */
function stub<T>(key: string): T {
  const slash = key.indexOf("/");
  const metadata =
    slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  return { metadata } as T;
}

/**
 * A reflector sink that hands objects to `feed` and keeps key → resourceVersion: a relist hands
 * on what is new or changed since, and removes (by name) what it no longer lists.
 */
// The reflector reads only metadata; its objects are the API server's JSON of the watched kind.
const asWatched = <T>(object: KubeObject): T => object as unknown as T;

export class KeyedFeedSink<T extends Listed> implements ReflectorSink {
  readonly #feed: WatchFeed<T>;
  #versions = new Map<string, string>();
  /** The keys and versions of the list under way. */
  #listing = new Map<string, string>();
  #firstListed: () => void = () => {};
  /** Settles once a list has been handed on in full. */
  readonly firstList = new Promise<void>(resolve => (this.#firstListed = resolve));

  constructor(feed: WatchFeed<T>) {
    this.#feed = feed;
  }

  /** How many objects the feed was handed and holds now. */
  get size(): number {
    return this.#versions.size;
  }

  listPage(items: KubeObject[], first: boolean): void {
    if (first) this.#listing = new Map();
    for (const item of items) {
      const key = objectKey(item);
      const version = item.metadata?.resourceVersion ?? "";
      this.#listing.set(key, version);
      const held = this.#versions.get(key);
      if (held === version) continue;
      // Held from here on, so that a list that fails midway hands it on only once.
      this.#versions.set(key, version);
      this.#feed.put(asWatched<T>(item));
    }
  }

  listed(): void {
    for (const key of this.#versions.keys()) {
      if (!this.#listing.has(key)) this.#feed.remove(stub<T>(key));
    }
    this.#versions = this.#listing;
    this.#listing = new Map();
    this.#firstListed();
  }

  upsert(object: KubeObject): void {
    this.#versions.set(objectKey(object), object.metadata?.resourceVersion ?? "");
    this.#feed.put(asWatched<T>(object));
  }

  remove(object: KubeObject): void {
    this.#versions.delete(objectKey(object));
    this.#feed.remove(asWatched<T>(object));
  }
}

/** A started-on-demand list-watch of `watched` into `feed`; see the file's head. */
export class ListWatch<T extends Listed> {
  readonly #sink: KeyedFeedSink<T>;
  readonly #reflector: Reflector;

  constructor(watched: Watched, feed: WatchFeed<T>, options: ListWatchOptions = {}) {
    const { path, what, labelSelector, fieldSelector } = watched;
    const query: Record<string, string> = {};
    if (labelSelector) query.labelSelector = labelSelector;
    if (fieldSelector) query.fieldSelector = fieldSelector;
    this.#sink = new KeyedFeedSink(feed);
    this.#reflector = new Reflector(
      options.client ?? defaultApiClient(),
      { name: what, path, query },
      this.#sink,
      {
        watchSeconds: WATCH_SECONDS,
        ...(options.log ? { log: options.log } : {}),
        ...options.reflector,
      },
    );
  }

  /** Lists, then watches, and keeps at it until stop(): failures are retried with backoff. */
  start(): void {
    this.#reflector.start();
  }

  async stop(): Promise<void> {
    await this.#reflector.stop();
  }

  /** Settles once a list has been handed on in full (failed lists are retried until one is). */
  synced(): Promise<void> {
    return this.#sink.firstList;
  }

  /** Whether a list has been handed on in full at least once. */
  get listed(): boolean {
    return this.#reflector.status().synced;
  }

  /** How many objects the feed was handed and holds now. */
  get size(): number {
    return this.#sink.size;
  }
}

/** A list-watch into `feed`; `who` tells the process's uses of one kind apart in logs. */
export type ListWatchOf<T extends Listed> = (
  feed: WatchFeed<T>,
  who: string,
  options?: ListWatchOptions,
) => ListWatch<T>;

/**
 * `make()`'s list-watch, made and started the first time it is asked for: the admission and
 * watcher processes share one module, and each runs only the watches it uses.
 */
export function startedOnFirstUse<T extends Listed>(make: () => ListWatch<T>): () => ListWatch<T> {
  let listWatch: ListWatch<T> | undefined;
  return () => {
    if (listWatch === undefined) {
      listWatch = make();
      listWatch.start();
    }
    return listWatch;
  };
}
