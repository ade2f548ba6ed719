// One resource's list + watch loop, the shape of client-go's Reflector: list (paged), then watch
// from the list's resourceVersion; a watch that ends is resumed from the last resourceVersion
// seen (bookmarks included); 410 Gone relists; any other failure waits a jittered exponential
// backoff and tries again, forever. Nothing here throws out of the loop: an API server that is
// down for minutes only shows in status(). The loop keeps no object: each list page goes to the
// sink as it arrives, so a cluster's 10 000 pods are never held at once here.
import { stepBackoff, type Backoff } from "../core/backoff";
import { ApiError, type ListWatchClient, type WatchStream } from "./api-client";

/** A Kubernetes object as the loop sees it: only metadata is read. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface ReflectorSink {
  /** One page of a list. `first`: a new list begins (a list that failed midway is not resumed). */
  listPage(items: KubeObject[], first: boolean): void;
  /** The list is complete: everything its pages did not name is gone. */
  listed(): void;
  upsert(object: KubeObject): void;
  remove(object: KubeObject): void;
}

/** A sink for whole lists: `replace` gets every page of a list at once, when the list is complete. */
export function wholeLists(sink: {
  replace(items: KubeObject[]): void;
  upsert(object: KubeObject): void;
  remove(object: KubeObject): void;
}): ReflectorSink {
  let pages: KubeObject[][] = [];
  return {
    listPage: (items, first) => void (first ? (pages = [items]) : pages.push(items)),
    listed: () => {
      const items = pages.flat();
      pages = [];
      sink.replace(items);
    },
    upsert: object => sink.upsert(object),
    remove: object => sink.remove(object),
  };
}

export interface ResourceSpec {
  /** For logs and status, e.g. `ingresses` or `ingresses in shop`. */
  name: string;
  /** Collection path, e.g. `/apis/networking.k8s.io/v1/namespaces/shop/ingresses`. */
  path: string;
  /** Extra query parameters (fieldSelector, labelSelector). */
  query?: Record<string, string>;
}

export interface ReflectorStatus {
  resource: string;
  /** A complete list has been received at least once. */
  synced: boolean;
  /** The watch is open and the API server answered it. */
  watching: boolean;
  lastSyncAt?: string;
  lastContactAt?: string;
  lastError?: string;
  lastErrorAt?: string;
  lists: number;
  errors: number;
}

export interface ReflectorOptions {
  pageSize: number;
  requestTimeoutMs: number;
  /** Watches ask the server to close after a random time in [min, 2 × min) seconds. */
  watchSeconds: number;
  /** A watch silent this long past its requested end is dead (a frozen server): dropped. */
  idleMarginMs: number;
  backoff: Backoff;
  random: () => number;
  log: (level: "info" | "warn", message: string, fields: Record<string, unknown>) => void;
}

export const DEFAULT_REFLECTOR_OPTIONS: ReflectorOptions = {
  pageSize: 500,
  requestTimeoutMs: 30_000,
  watchSeconds: 60,
  idleMarginMs: 30_000,
  backoff: { durationMs: 250, factor: 2, jitter: 0.5, steps: 1_000_000, capMs: 15_000 },
  random: Math.random,
  log: () => {},
};

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

interface WatchEvent {
  type?: string;
  object?: KubeObject & { code?: number; message?: string; reason?: string };
}

class GoneError extends Error {}

/** A watch that ends cleanly this soon after it opened, with no event, counts as failed (client-go). */
const SHORTEST_CLEAN_WATCH_MS = 1000;

export class Reflector {
  readonly #client: ListWatchClient;
  readonly #spec: ResourceSpec;
  readonly #sink: ReflectorSink;
  readonly #options: ReflectorOptions;
  #resourceVersion: string | undefined;
  #backoff: Backoff;
  #stopped = false;
  readonly #abort = new AbortController();
  #stream: WatchStream | undefined;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #status: ReflectorStatus;

  constructor(
    client: ListWatchClient,
    spec: ResourceSpec,
    sink: ReflectorSink,
    options: Partial<ReflectorOptions> = {},
  ) {
    this.#client = client;
    this.#spec = spec;
    this.#sink = sink;
    this.#options = { ...DEFAULT_REFLECTOR_OPTIONS, ...options };
    this.#backoff = this.#options.backoff;
    this.#status = { resource: spec.name, synced: false, watching: false, lists: 0, errors: 0 };
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#stream?.abort();
    this.#wake?.();
    await this.#loop;
  }

  status(): ReflectorStatus {
    return { ...this.#status };
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        if (this.#resourceVersion === undefined) await this.#list();
        await this.#watch();
      } catch (error) {
        if (this.#stopped) return;
        if (error instanceof GoneError || isGone(error)) {
          this.#options.log("info", "watch expired; relisting", { resource: this.#spec.name });
          this.#resourceVersion = undefined;
          continue;
        }
        await this.#fail(error);
      }
    }
  }

  async #fail(error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    this.#status.watching = false;
    this.#status.errors += 1;
    this.#status.lastError = message;
    this.#status.lastErrorAt = new Date().toISOString();
    const { waitMs, next } = stepBackoff(this.#backoff, this.#options.random);
    this.#backoff = next;
    this.#options.log("warn", "list/watch failed; retrying", {
      resource: this.#spec.name,
      err: message,
      retryMs: Math.round(waitMs),
    });
    await new Promise<void>(resolve => {
      const timer = setTimeout(resolve, waitMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #list(): Promise<void> {
    let token: string | undefined;
    let resourceVersion = "";
    let count = 0;
    do {
      const query = { ...this.#spec.query, limit: String(this.#options.pageSize) };
      if (token) Object.assign(query, { continue: token });
      const page = (await this.#client.getJson(
        this.#path(query),
        this.#options.requestTimeoutMs,
        this.#abort.signal,
      )) as ListPage;
      const items = page.items ?? [];
      this.#sink.listPage(items, token === undefined);
      count += items.length;
      token = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? "";
    } while (token);
    this.#sink.listed();
    this.#resourceVersion = resourceVersion;
    const now = new Date().toISOString();
    Object.assign(this.#status, { synced: true, lastSyncAt: now, lastContactAt: now });
    this.#status.lists += 1;
    this.#options.log("info", "listed", { resource: this.#spec.name, count });
  }

  async #watch(): Promise<void> {
    const seconds = Math.floor(this.#options.watchSeconds * (1 + this.#options.random()));
    const query: Record<string, string> = {
      ...this.#spec.query,
      watch: "true",
      allowWatchBookmarks: "true",
      timeoutSeconds: String(seconds),
      resourceVersion: this.#resourceVersion ?? "",
    };
    let failure: unknown;
    let events = 0;
    const opened = Date.now();
    const stream = this.#client.stream(
      this.#path(query),
      line => {
        events++;
        try {
          this.#onEvent(line as WatchEvent);
        } catch (error) {
          failure = error;
          stream.abort();
        }
      },
      {
        connectMs: this.#options.requestTimeoutMs,
        idleMs: seconds * 1000 + this.#options.idleMarginMs,
        onOpen: () => this.#opened(),
      },
    );
    this.#stream = stream;
    await stream.done;
    if (failure !== undefined) throw failure;
    // A server (or a proxy) that closes every watch at once would otherwise be asked again at once.
    if (events === 0 && Date.now() - opened < SHORTEST_CLEAN_WATCH_MS && !this.#stopped) {
      throw new Error("very short watch: closed within a second, with no event");
    }
  }

  #onEvent(event: WatchEvent): void {
    const object = event.object;
    if (!object) return;
    if (event.type === "ERROR") {
      if (object.code === 410) throw new GoneError(object.message ?? "Gone");
      throw new ApiError(object.code ?? 500, object.message ?? "watch error", object.reason);
    }
    this.#contact();
    const version = object.metadata?.resourceVersion;
    if (event.type === "ADDED" || event.type === "MODIFIED") this.#sink.upsert(object);
    else if (event.type === "DELETED") this.#sink.remove(object);
    if (version) this.#resourceVersion = version;
  }

  #opened(): void {
    this.#status.watching = true;
    this.#status.lastContactAt = new Date().toISOString();
  }

  #contact(): void {
    // The first event after a failure proves the watch works: the backoff starts over. An
    // answer alone does not: a server that accepts each watch and closes it at once would keep
    // the wait at its shortest.
    this.#backoff = this.#options.backoff;
    this.#opened();
  }

  #path(query: Record<string, string>): string {
    const search = new URLSearchParams(query).toString();
    return `${this.#spec.path}?${search}`;
  }
}

function isGone(error: unknown): boolean {
  return error instanceof ApiError && (error.statusCode === 410 || error.reason === "Expired");
}
