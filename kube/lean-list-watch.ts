// A list-watch that holds no objects: it hands each one on and keeps only key → resourceVersion,
// which tells a relist what went away. client-node's ListWatch keeps every object whole, and the
// fluent client's Watch keeps its own copy by uid beside whatever its caller keeps: a process that
// watched every pod held each one twice, whole, for as long as the pod lived. Each pod event then
// moved a whole pod into V8's old space, and the admission process's scavenges, which copy what
// survives, took 5–16 ms in the middle of webhook calls (hack/bench/README.md, admission). Here an
// object lives as long as its event handler keeps it: the caller's feed keeps only what it reads.
import { KubeConfig, Watch } from "@kubernetes/client-node";
import type { ObjectInformer } from "./informer";
import { KeptAliveApi } from "./kept-alive-api";

/** What this reads of an object: its key and version. Timestamps stay strings, as on the wire. */
export interface Listed {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

type ObjectCallback<T> = (object: T) => void;
type ErrorCallback = (error?: unknown) => void;

/** One page of a list, as the API server answers it. */
export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** An open watch; `abort` ends it, and its `onDone` is then called. */
export interface OpenWatch {
  abort(): void;
}

/** Where lists and watches go: the API server (apiServerSource), or a test's. */
export interface ListWatchSource<T> {
  list(query: Record<string, string>): Promise<ListPage<T>>;
  /** Opens a watch; `onDone` is called once, with the error if it failed or was refused. */
  watch(
    query: Record<string, string>,
    onEvent: (type: string, object: unknown) => void,
    onDone: (error: unknown) => void,
  ): Promise<OpenWatch>;
}

export interface LeanListWatchOptions<T> {
  source: ListWatchSource<T>;
  /** `fieldSelector`, `labelSelector`: sent with every list and watch. */
  selectors?: Record<string, string>;
  /** Objects per list page: a cluster's 10 000 pods are never one answer. */
  pageSize?: number;
  /** The API server ends each watch after this long (client-go: 5 to 10 minutes, random). */
  watchSeconds?: () => number;
  now?: () => number;
}

type ObjectVerb = "add" | "update" | "delete" | "change";
type StatusVerb = "error" | "connect";

/** A watch that ends cleanly sooner than this after it opened, with no event, counts as failed. */
const SHORTEST_CLEAN_WATCH_MS = 1000;
/** Past the watch's own timeout, the connection is taken for dead (a peer gone without a FIN). */
const WATCHDOG_GRACE_MS = 60_000;

const randomWatchSeconds = (): number => Math.floor(300 + Math.random() * 300);

function keyOf(object: Listed): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/** Metadata only, for an object that a relist no longer finds: its feed removes it by name. */
function stub<T>(key: string): T {
  const slash = key.indexOf("/");
  const metadata =
    slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  return { metadata } as T;
}

/** A Status answer's code (a watch's ERROR event, a refused request). */
function statusCode(value: unknown): number | undefined {
  const v = value as { code?: unknown; statusCode?: unknown } | undefined;
  const code = v?.code ?? v?.statusCode;
  return typeof code === "number" ? code : undefined;
}

export class LeanListWatch<T extends Listed> implements ObjectInformer<T> {
  readonly #options: LeanListWatchOptions<T>;
  readonly #objectHandlers = new Map<ObjectVerb, Set<ObjectCallback<T>>>();
  readonly #statusHandlers = new Map<StatusVerb, Set<ErrorCallback>>();
  /** key → resourceVersion of every object the feed holds. */
  #versions = new Map<string, string>();
  #resourceVersion: string | undefined;
  #watch: OpenWatch | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #listed = false;
  /** Bumped by every stop and start: callbacks of an older run (or after stop) are ignored. */
  #run = 0;

  constructor(options: LeanListWatchOptions<T>) {
    this.#options = options;
  }

  on(verb: ObjectVerb, callback: ObjectCallback<T>): void;
  on(verb: StatusVerb, callback: ErrorCallback): void;
  on(verb: ObjectVerb | StatusVerb, callback: ObjectCallback<T> | ErrorCallback): void {
    this.#handlers(verb).add(callback as never);
  }

  off(verb: ObjectVerb, callback: ObjectCallback<T>): void;
  off(verb: StatusVerb, callback: ErrorCallback): void;
  off(verb: ObjectVerb | StatusVerb, callback: ObjectCallback<T> | ErrorCallback): void {
    this.#handlers(verb).delete(callback as never);
  }

  /** Whether a list has been handed on in full at least once (a failed one does not count). */
  get listed(): boolean {
    return this.#listed;
  }

  /** How many objects the feed was handed and holds now. */
  get size(): number {
    return this.#versions.size;
  }

  /** Lists (every page), then watches from the list's resourceVersion. A failure is an "error" event. */
  async start(): Promise<void> {
    const run = ++this.#run;
    this.#endWatch();
    try {
      await this.#list(run);
    } catch (error) {
      if (run === this.#run) this.#emitStatus("error", error);
      return;
    }
    await this.#openWatch(run);
  }

  async stop(): Promise<void> {
    this.#run++;
    this.#endWatch();
  }

  #handlers(verb: ObjectVerb | StatusVerb): Set<unknown> {
    const table: Map<string, Set<unknown>> = verb === "error" || verb === "connect"
      ? this.#statusHandlers
      : this.#objectHandlers;
    let set = table.get(verb);
    if (!set) table.set(verb, (set = new Set()));
    return set;
  }

  #emit(verb: "add" | "update" | "delete", object: T): void {
    for (const handler of this.#objectHandlers.get(verb) ?? []) handler(object);
    for (const handler of this.#objectHandlers.get("change") ?? []) handler(object);
  }

  #emitStatus(verb: StatusVerb, error?: unknown): void {
    for (const handler of this.#statusHandlers.get(verb) ?? []) handler(error);
  }

  async #list(run: number): Promise<void> {
    const { source, selectors = {}, pageSize = 500 } = this.#options;
    const seen = new Map<string, string>();
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const query: Record<string, string> = { ...selectors, limit: String(pageSize) };
      if (next) query.continue = next;
      const page = await source.list(query);
      if (run !== this.#run) return;
      // Continued pages are of the first page's snapshot: its resourceVersion is the list's.
      resourceVersion ??= page.metadata?.resourceVersion;
      for (const object of page.items) this.#handOnListed(object, seen);
      next = page.metadata?.continue || undefined;
    } while (next);
    this.#forgetUnlisted(seen);
    this.#resourceVersion = resourceVersion;
    this.#listed = true;
  }

  /** Objects deleted while no watch was open: the feed is told, by name. */
  #forgetUnlisted(listed: Map<string, string>): void {
    for (const key of this.#versions.keys()) {
      if (!listed.has(key)) this.#emit("delete", stub<T>(key));
    }
    this.#versions = listed;
  }

  /** A listed object: handed on if new or changed since the feed last had it. */
  #handOnListed(object: T, seen: Map<string, string>): void {
    const key = keyOf(object);
    const version = object.metadata?.resourceVersion ?? "";
    const held = this.#versions.get(key);
    seen.set(key, version);
    if (held === undefined) this.#emit("add", object);
    else if (held !== version) this.#emit("update", object);
  }

  async #openWatch(run: number): Promise<void> {
    const { source, selectors = {}, now = Date.now } = this.#options;
    const seconds = (this.#options.watchSeconds ?? randomWatchSeconds)();
    const query: Record<string, string> = {
      ...selectors,
      allowWatchBookmarks: "true",
      timeoutSeconds: String(seconds),
    };
    if (this.#resourceVersion) query.resourceVersion = this.#resourceVersion;
    const opened = now();
    let events = 0;
    let gone = false;
    let refused: unknown;
    let expired = false;
    let done = false;
    const onEvent = (type: string, object: unknown): void => {
      if (run !== this.#run) return;
      events++;
      if (type === "ERROR") {
        // 410: the resourceVersion is older than the API server keeps; anything else ends it.
        if (statusCode(object) === 410) gone = true;
        else refused ??= object;
        return;
      }
      this.#event(type, object as T);
    };
    const onDone = (error: unknown): void => {
      done = true;
      if (run !== this.#run) return;
      this.#endWatch();
      if (gone || statusCode(error) === 410) {
        this.#resourceVersion = undefined;
        void this.start();
      } else if (error !== null && error !== undefined && !expired) {
        this.#emitStatus("error", error);
      } else if (refused !== undefined) {
        this.#emitStatus("error", new Error(`watch ended: ${JSON.stringify(refused)}`));
      } else if (!expired && events === 0 && now() - opened < SHORTEST_CLEAN_WATCH_MS) {
        this.#emitStatus("error", new Error("watch closed at once, with no event"));
      } else {
        void this.#openWatch(run);
      }
    };
    const watch = await source.watch(query, onEvent, onDone);
    if (run !== this.#run || done) {
      if (!done) watch.abort();
      return;
    }
    this.#watch = watch;
    this.#watchdog = setTimeout(
      () => {
        expired = true;
        watch.abort();
      },
      seconds * 1000 + WATCHDOG_GRACE_MS,
    );
    this.#watchdog.unref();
    this.#emitStatus("connect");
  }

  #event(type: string, object: T): void {
    const version = object.metadata?.resourceVersion;
    if (version) this.#resourceVersion = version;
    if (type === "BOOKMARK") return;
    const key = keyOf(object);
    if (type === "DELETED") {
      this.#versions.delete(key);
      this.#emit("delete", object);
    } else if (type === "ADDED" || type === "MODIFIED") {
      const known = this.#versions.has(key);
      this.#versions.set(key, version ?? "");
      this.#emit(known ? "update" : "add", object);
    }
  }

  #endWatch(): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    const watch = this.#watch;
    this.#watch = undefined;
    watch?.abort();
  }
}

/** Lists and watches `path` (a collection: `/api/v1/pods`) on the API server `kc` names. */
export function apiServerSource<T>(path: string, kc = defaultKubeConfig()): ListWatchSource<T> {
  const api = new KeptAliveApi(kc);
  const watcher = new Watch(kc);
  return {
    list: query => api.get<ListPage<T>>(`${path}?${new URLSearchParams(query)}`),
    watch: (query, onEvent, onDone) =>
      watcher.watch(path, query, (type, object) => onEvent(type, object), onDone),
  };
}

function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}
