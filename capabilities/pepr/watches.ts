// The module's list-watches (kube/list-watch.ts) and ordered event handling (kube/informer.ts),
// logging through Pepr's logger with the object's namespace/name.
import { Log } from "pepr";
import { orderedFeed, type ObjectHandler, type WatchFeed } from "../../kube/informer";
import { ListWatch, type Listed, type ListWatchOptions, type Watched } from "../../kube/list-watch";

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
  return orderedFeed<T>(handle, (error, object) =>
    Log.warn(
      { ns: object.metadata?.namespace, name: object.metadata?.name, err: String(error) },
      `${what}: handling an event failed; the resync repairs what it left`,
    ),
  );
}
