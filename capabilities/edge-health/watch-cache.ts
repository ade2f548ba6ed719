// Objects of one kind by namespace/name, kept current by a watch and a periodic list: admission
// and the resync look objects up here, never with a GET per address.
import { K8s, Log } from "pepr";
import type { GenericClass } from "kubernetes-fluent-client";

interface Named {
  metadata?: { name?: string; namespace?: string };
}

export const keyOf = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

export class WatchCache<T extends Named> {
  readonly #objects = new Map<string, T>();
  #listed = false;

  /**
   * @param slim keeps what the readers need of each object (a pod cache of every pod in the
   *   cluster holds a few fields each, not whole specs).
   */
  constructor(
    readonly model: GenericClass,
    readonly what: string,
    readonly slim: (object: T) => T = object => object,
    /** Only objects in this namespace with these labels (a DaemonSet's pods). */
    readonly scope: { namespace?: string; labels?: Record<string, string> } = {},
  ) {}

  #client() {
    let client = K8s<typeof this.model, T>(this.model);
    if (this.scope.namespace) client = client.InNamespace(this.scope.namespace) as typeof client;
    for (const [key, value] of Object.entries(this.scope.labels ?? {})) {
      client = client.WithLabel(key, value) as typeof client;
    }
    return client;
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#objects.get(keyOf(namespace, name));
  }

  all(): T[] {
    return [...this.#objects.values()];
  }

  /** Whether a full list has filled the cache at least once. */
  get ready(): boolean {
    return this.#listed;
  }

  observe(object: T, deleted = false): void {
    const name = object.metadata?.name;
    if (!name) return;
    const key = keyOf(object.metadata?.namespace, name);
    if (deleted) this.#objects.delete(key);
    else this.#objects.set(key, this.slim(object));
  }

  async relist(): Promise<void> {
    try {
      const list = await this.#client().Get();
      this.#objects.clear();
      for (const object of list.items) this.observe(object);
      this.#listed = true;
    } catch (error) {
      Log.warn({ what: this.what, err: String(error) }, "list failed; the next resync retries");
    }
  }

  /** Lists, then watches, and re-lists every `resyncMs` (a missed event lasts one period). */
  start(resyncMs: number): void {
    void this.relist().then(() =>
      this.#client()
        .Watch((object, phase) => this.observe(object, phase === "DELETED"))
        .start()
        .catch(error =>
          Log.warn({ what: this.what, err: String(error) }, "watch failed; resync keeps the cache"),
        ),
    );
    setInterval(() => void this.relist(), resyncMs).unref();
  }
}
