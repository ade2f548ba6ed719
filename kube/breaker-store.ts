// The breaker ConfigMap: one entry per pod UID (pod-retry.ts), shared by every replica and the
// CLI. Every change is read → modify → PUT with the resourceVersion read, retried on 409
// Conflict (or on AlreadyExists when two writers create it at once) with a short jittered wait.
import type { CoreV1Api, V1ConfigMap } from "@kubernetes/client-node";
import { configMapDataBytes, CONFIGMAP_DATA_MAX_BYTES, staleBreakerKeys } from "../core/permission";
import { isConflict, isNotFound } from "./api-errors";
import {
  EMPTY_ENTRY,
  isEmptyEntry,
  parseEntry,
  serializeEntry,
  type PodEntry,
} from "../core/permission/pod-retry";

const MAX_TRIES = 20;

export class BreakerStore {
  constructor(
    private readonly core: CoreV1Api,
    readonly namespace: string,
    readonly name: string,
  ) {}

  async #get(): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({
        name: this.name,
        namespace: this.namespace,
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** The pod's entry (an empty one when it has none or it cannot be read). */
  async read(uid: string): Promise<PodEntry> {
    const configMap = await this.#get();
    return parseEntry(configMap?.data?.[uid], uid) ?? { ...EMPTY_ENTRY };
  }

  /** Every entry, for listings. */
  async list(): Promise<Map<string, PodEntry>> {
    const data = (await this.#get())?.data ?? {};
    const entries = new Map<string, PodEntry>();
    for (const [uid, value] of Object.entries(data)) {
      const entry = parseEntry(value, uid);
      if (entry) entries.set(uid, entry);
    }
    return entries;
  }

  /**
   * Applies `change` to the pod's entry and stores the result (removing the key when the entry
   * is empty). `change` may run several times, on fresh reads; it must be pure.
   */
  async update(uid: string, change: (entry: PodEntry) => PodEntry): Promise<PodEntry> {
    let result: PodEntry = { ...EMPTY_ENTRY };
    await this.#modify(data => {
      const current = parseEntry(data[uid], uid) ?? { ...EMPTY_ENTRY };
      result = change(current);
      const next = { ...data };
      if (isEmptyEntry(result)) delete next[uid];
      else next[uid] = serializeEntry(result);
      return next;
    });
    return result;
  }

  /** The operator's bulk reset: the pods' entries removed in one write; returns what they were. */
  async resetMany(uids: readonly string[]): Promise<Map<string, PodEntry>> {
    let before = new Map<string, PodEntry>();
    await this.#modify(data => {
      before = new Map(uids.map(uid => [uid, parseEntry(data[uid], uid) ?? { ...EMPTY_ENTRY }]));
      const next = { ...data };
      for (const uid of uids) delete next[uid];
      return next;
    });
    return before;
  }

  /**
   * Removes the entries of pods that are gone; returns their UIDs. `listedAt` is when `liveUids`
   * was listed: an entry written after it may belong to a pod created since, and stays.
   */
  async prune(liveUids: ReadonlySet<string>, listedAt: Date): Promise<string[]> {
    let removed: string[] = [];
    await this.#modify(data => {
      removed = staleBreakerKeys(data, liveUids).filter(uid => {
        const written = parseEntry(data[uid], uid)?.retry?.lastFailureAt;
        return written === undefined || Date.parse(written) < listedAt.getTime();
      });
      if (removed.length === 0) return data;
      const next = { ...data };
      for (const uid of removed) delete next[uid];
      return next;
    });
    return removed;
  }

  async #modify(change: (data: Record<string, string>) => Record<string, string>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const configMap = await this.#get();
      const data = configMap?.data ?? {};
      const next = change(data);
      if (sameData(data, next)) return;
      const bytes = configMapDataBytes(next);
      if (bytes > CONFIGMAP_DATA_MAX_BYTES) {
        throw new Error(
          `ConfigMap ${this.namespace}/${this.name} would hold ${bytes} bytes, over the API server's ${CONFIGMAP_DATA_MAX_BYTES}`,
        );
      }
      try {
        await this.#write(configMap, next);
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= MAX_TRIES) throw error;
        await new Promise(r => setTimeout(r, 10 + Math.random() * 40 * attempt));
      }
    }
  }

  async #write(current: V1ConfigMap | undefined, data: Record<string, string>): Promise<void> {
    const { namespace, name } = this;
    if (!current) {
      await this.core.createNamespacedConfigMap({
        namespace,
        body: {
          metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": "bulwark" } },
          data,
        },
      });
      return;
    }
    // The resourceVersion read makes this a compare-and-swap: 409 if anyone wrote since.
    await this.core.replaceNamespacedConfigMap({
      name,
      namespace,
      body: { ...current, data },
    });
  }
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every(k => a[k] === b[k]);
}
