// Ordered handling of a watch's events: what the module's and the workloads' watches hand each
// object's events to. (The loop itself is kube/reflector.ts, under kube/list-watch.ts.)
import { objectKey } from "../core/object-key";

/** What a watch keeps current: each object listed, added or changed, and each deleted. */
export interface WatchFeed<T> {
  put(object: T): void;
  remove(object: T): void;
}

/** What an ordered feed does with each object: `deleted` says which event it was. */
export type ObjectHandler<T> = (object: T, deleted: boolean) => void | Promise<void>;

/**
 * A feed that hands each event to `handle`, one at a time per object (namespace/name) and in the
 * order they came, as Pepr's watch queue does: an object's delete never overtakes its update.
 * Different objects do not wait on each other. A handler that fails is reported to `failed`; the
 * object's next event still runs.
 */
export function orderedFeed<T extends { metadata?: { name?: string; namespace?: string } }>(
  handle: ObjectHandler<T>,
  failed: (error: unknown, object: T) => void,
): WatchFeed<T> & { idle(): Promise<void> } {
  const pending = new Map<string, Promise<void>>();
  const enqueue = (object: T, deleted: boolean): void => {
    const key = objectKey(object);
    const next = (pending.get(key) ?? Promise.resolve())
      .then(() => handle(object, deleted))
      .catch(error => failed(error, object));
    pending.set(key, next);
    void next.then(() => {
      if (pending.get(key) === next) pending.delete(key);
    });
  };
  return {
    put: object => enqueue(object, false),
    remove: object => enqueue(object, true),
    /** Settles once every event handed so far has been handled (for tests and shutdown). */
    idle: async () => {
      while (pending.size > 0) await Promise.all(pending.values());
    },
  };
}
