// The module's list-watches (kube/list-watch.ts) and ordered event handling (kube/informer.ts),
// logging through Pepr's logger with the object's namespace/name.
import { Log } from "pepr";
import type { ObjectHandler, WatchFeed } from "../../kube/informer";
import { loggedOrderedFeed, WatchCache } from "../../kube/watch-cache";
import { ListWatch, type Listed, type ListWatchOptions, type Watched } from "../../kube/list-watch";
import { PODS, resourcePath } from "../../kube/api-paths";
import { slimPod, type Pod as EdgePod } from "../../core/edge";
import type { PermissionPod } from "../../core/permission";
import { isWatcherProcess } from "./process";

/** Pods the scheduler has bound (the API server's field selector for pods supports `!=`). */
const BOUND_PODS = "spec.nodeName!=";

/** Pepr's logger in the shape the kube/ loops and helpers log with. */
export function peprLog(
  level: "info" | "warn",
  message: string,
  fields: Record<string, unknown>,
): void {
  Log[level](fields, message);
}

/** A list-watch of `watched` into `feed` that logs through Pepr; not started. */
export function moduleListWatch<T extends Listed>(
  watched: Watched,
  feed: WatchFeed<T>,
  options: ListWatchOptions = {},
): ListWatch<T> {
  return new ListWatch(watched, feed, { log: peprLog, ...options });
}

/** Each object's events handed to `handle` one at a time, in order; a failure is logged. */
export function orderedHandling<T extends Listed>(
  what: string,
  handle: ObjectHandler<T>,
): WatchFeed<T> & { idle(): Promise<void> } {
  return loggedOrderedFeed(what, handle, peprLog);
}

/** A WatchCache whose loop and followers log through Pepr; not started. */
export function moduleWatchCache<T extends Listed>(
  watched: Watched,
  slim?: (object: T) => T,
): WatchCache<T> {
  return new WatchCache(watched, { slim, log: peprLog });
}

/** A pod as the module's capabilities read it: edge health's promotion and pod permission's revoker. */
export type ClusterPod = EdgePod & PermissionPod;

/**
 * The cluster's pods, on one list-watch per process: edge health looks pods up in it (kept as
 * promotion reads them), and the watcher's pod permission follows its events for Bulwark's pods.
 * The admission process holds only pods bound to a node: promotion looks up the pods endpoints
 * point at, which are bound, and a pod is sent to it only once the scheduler has bound it, not
 * while it is being created (the moment that process is busy admitting it). The watcher holds
 * every pod: a pod deleted before it was ever scheduled still holds our finalizer until the
 * revoker releases it. Each reader starts it (once is what happens); not started at build.
 */
export const clusterPods = moduleWatchCache<ClusterPod>(
  isWatcherProcess()
    ? { path: resourcePath(PODS), what: "pods" }
    : { path: resourcePath(PODS), what: "pods bound to a node", fieldSelector: BOUND_PODS },
  slimPod,
);
