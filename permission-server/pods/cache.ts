// Bulwark's pods (label permission.bulwark.dev/managed=true), listed and watched so that status
// long-polls are answered from memory, whichever replica wrote the status. Our own writes are fed
// in too (the API server's answer), so a waiter hears about them before the watch delivers them.
// On the module's list-watch (kube/list-watch.ts), which keeps nothing itself: client-node's
// informer kept its own copy of every pod beside this one. Pods are kept without bookkeeping.
import type { V1Pod } from "@kubernetes/client-node";
import { withoutBookkeeping } from "../../core/bookkeeping";
import { namespacedName, objectKey } from "../../core/object-key";
import { PERMISSION_MANAGED_LABEL } from "../../core/names";
import { ApiClient } from "../../kube/api-client";
import { isNotFound } from "../../kube/api-errors";
import { ListWatch } from "../../kube/list-watch";
import type { Kube } from "../kube";
import type { Logger } from "../../kube/log";
import { PODS, resourcePath } from "../../kube/api-paths";

/** etcd revisions are numbers in practice; a newer copy replaces an older one, never the reverse. */
function newer(candidate: V1Pod, current: V1Pod | undefined): boolean {
  if (!current) return true;
  const a = Number(candidate.metadata?.resourceVersion);
  const b = Number(current.metadata?.resourceVersion);
  return !Number.isFinite(a) || !Number.isFinite(b) || a >= b;
}

export class PodCache {
  readonly #pods = new Map<string, V1Pod>();
  readonly #listeners = new Map<string, Set<() => void>>();
  #listWatch: ListWatch<V1Pod> | undefined;

  constructor(
    private readonly kube: Kube,
    private readonly log: Logger,
  ) {}

  /** Lists and watches; resolves once the first list is in (a failed list is retried). */
  async start(): Promise<void> {
    const listWatch = new ListWatch<V1Pod>(
      {
        path: resourcePath(PODS),
        what: "permission pods",
        labelSelector: `${PERMISSION_MANAGED_LABEL}=true`,
      },
      { put: pod => this.put(pod), remove: pod => this.#remove(pod) },
      {
        client: new ApiClient(this.kube.kc),
        log: (level, message, fields) => this.log[level](message, fields),
      },
    );
    this.#listWatch = listWatch;
    listWatch.start();
    await listWatch.synced();
  }

  async stop(): Promise<void> {
    await this.#listWatch?.stop();
  }

  get(namespace: string, name: string): V1Pod | undefined {
    return this.#pods.get(namespacedName(namespace, name));
  }

  /** From the API server (and into the cache); undefined when the pod is gone. */
  async fresh(namespace: string, name: string): Promise<V1Pod | undefined> {
    try {
      const pod = await this.kube.core.readNamespacedPod({ name, namespace });
      this.put(pod);
      return pod;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Takes a copy newer than what is cached (a watch event, or the answer to our own write). */
  put(pod: V1Pod): void {
    const k = objectKey(pod);
    if (!newer(pod, this.#pods.get(k))) return;
    this.#pods.set(k, withoutBookkeeping(pod));
    this.#emit(k);
  }

  #remove(pod: V1Pod): void {
    const k = objectKey(pod);
    this.#pods.delete(k);
    this.#emit(k);
  }

  #emit(k: string): void {
    for (const listener of [...(this.#listeners.get(k) ?? [])]) listener();
  }

  /** Calls `listener` whenever the pod changes; returns the unsubscribe function. */
  onChange(namespace: string, name: string, listener: () => void): () => void {
    const k = namespacedName(namespace, name);
    let set = this.#listeners.get(k);
    if (!set) this.#listeners.set(k, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(k);
    };
  }

  /** Resolves when the pod changes or after `ms`, whichever is first (or when `signal` aborts). */
  changed(namespace: string, name: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      const done = (): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      const unsubscribe = this.onChange(namespace, name, done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
