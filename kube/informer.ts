// client-node's informers stop on the first watch or list error and never start again by
// themselves; every workload's watch goes through here so that it comes back, with Kubernetes'
// jittered backoff, until the process stops it.
import { backoffWait, UNBOUNDED_STEPS, type Backoff, type Random } from "../core/backoff";

/** What this needs of an informer (client-node's `Informer`/`ListWatch`). */
export interface Restartable {
  on(verb: "error" | "connect", callback: (error?: unknown) => void): void;
  start(): Promise<void>;
}

export interface KeepWatchingOptions {
  /** What is watched, for the log line ("pods", "configmap kube-system/edge-zones"). */
  what: string;
  warn: (message: string, fields: Record<string, unknown>) => void;
  /** True once the owner stopped the informer on purpose: no restart then. */
  stopped?: () => boolean;
  backoff?: Backoff;
  random?: Random;
  setTimer?: (run: () => void, ms: number) => void;
}

/** Reflector-like: 1 s doubling to 30 s, jittered; a watch that connects starts the count over. */
export const WATCH_RESTART_BACKOFF: Backoff = {
  durationMs: 1000,
  factor: 2,
  jitter: 0.5,
  steps: UNBOUNDED_STEPS,
  capMs: 30_000,
};

const unrefTimer = (run: () => void, ms: number): void => void setTimeout(run, ms).unref();

/** Restarts `informer` after each error until `stopped()`; failures in a row lengthen the wait. */
export function keepWatching(informer: Restartable, options: KeepWatchingOptions): void {
  const { what, warn, stopped = () => false, setTimer = unrefTimer } = options;
  const backoff = options.backoff ?? WATCH_RESTART_BACKOFF;
  const random = options.random ?? Math.random;
  let failures = 0;
  informer.on("connect", () => void (failures = 0));
  informer.on("error", error => {
    if (stopped()) return;
    const retryMs = backoffWait(backoff, ++failures, random);
    warn("watch ended; restarting", { what, retryMs, err: describe(error) });
    setTimer(() => {
      if (stopped()) return;
      // A start that fails emits "error" again, which schedules the next try.
      informer.start().catch(() => {});
    }, retryMs);
  });
}

/** What a watch keeps current: each object listed, added or changed, and each deleted. */
export interface WatchFeed<T> {
  put(object: T): void;
  remove(object: T): void;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
    const key = `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
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
