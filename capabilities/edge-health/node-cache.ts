// Nodes by name, kept current by a watch and a periodic list: admission looks nodes up here,
// never with a GET per address.
import { K8s, Log, kind } from "pepr";

type Node = InstanceType<typeof kind.Node>;

export class NodeCache {
  readonly #nodes = new Map<string, Node>();
  #listed = false;

  get(name: string): Node | undefined {
    return this.#nodes.get(name);
  }

  all(): Node[] {
    return [...this.#nodes.values()];
  }

  /** Whether the cache has been filled by a full list at least once. */
  get ready(): boolean {
    return this.#listed;
  }

  observe(node: Node, deleted = false): void {
    const name = node.metadata?.name;
    if (!name) return;
    if (deleted) this.#nodes.delete(name);
    else this.#nodes.set(name, node);
  }

  async relist(): Promise<void> {
    try {
      const list = await K8s(kind.Node).Get();
      this.#nodes.clear();
      for (const node of list.items) this.observe(node);
      this.#listed = true;
    } catch (error) {
      Log.warn({ err: String(error) }, "node list failed; the next resync retries");
    }
  }

  /** Lists, then watches (both admission and watcher processes need nodes), and re-lists. */
  start(resyncMs: number): void {
    void this.relist().then(() =>
      K8s(kind.Node)
        .Watch((node, phase) => this.observe(node, phase === "DELETED"))
        .start()
        .catch(error =>
          Log.warn({ err: String(error) }, "node watch failed; resync keeps the cache"),
        ),
    );
    setInterval(() => void this.relist(), resyncMs).unref();
  }
}
