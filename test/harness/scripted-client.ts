// An API server's list and watch, scripted for a unit test of a list-watch (kube/reflector.ts,
// kube/list-watch.ts): its lists answer from scripted pages; its watches stay open until the test
// sends events or ends them. The real API server cannot be told to expire a watch (410), fail a
// list or end a watch on cue; test/integration/edge-health/watch-cache.test.ts runs on the real one.
import type { ListWatchClient, WatchStream } from "../../kube/api-client";

/** One page of a list, as the API server answers it. */
export interface ScriptedPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** One watch the client opened: the test sends its events and ends it. */
export interface ScriptedWatch {
  query: Record<string, string>;
  send(type: string, object: object): void;
  /** Ends the watch: cleanly, or with `error`. */
  end(error?: Error): void;
  aborted: boolean;
}

const queryOf = (path: string): Record<string, string> =>
  Object.fromEntries(new URL(path, "http://x").searchParams);

export class ScriptedClient<T> implements ListWatchClient {
  /** The query of every list call, in order. */
  readonly lists: Record<string, string>[] = [];
  /** The collection path of every list call, in order. */
  readonly listPaths: string[] = [];
  readonly watches: ScriptedWatch[] = [];

  /** `pages`: each list call takes the next; an Error is thrown instead. The last one repeats. */
  constructor(public pages: (ScriptedPage<T> | Error)[]) {}

  async getJson(path: string): Promise<unknown> {
    this.lists.push(queryOf(path));
    this.listPaths.push(new URL(path, "http://x").pathname);
    const page = this.pages.length > 1 ? this.pages.shift() : this.pages[0];
    if (page === undefined) throw new Error("no page scripted");
    if (page instanceof Error) throw page;
    return page;
  }

  stream(
    path: string,
    onLine: (line: unknown) => void,
    timing: { onOpen?: () => void },
  ): WatchStream {
    let finish: (error?: Error) => void = () => {};
    let finished = false;
    const done = new Promise<void>((resolve, reject) => {
      finish = error => {
        if (finished) return;
        finished = true;
        if (error) reject(error);
        else resolve();
      };
    });
    const watch: ScriptedWatch = {
      query: queryOf(path),
      aborted: false,
      send: (type, object) => void (!finished && onLine({ type, object })),
      end: error => finish(error),
    };
    this.watches.push(watch);
    timing.onOpen?.();
    return {
      done,
      abort: () => {
        watch.aborted = true;
        finish();
      },
    };
  }

  /** The watch opened last (fails the test when none is). */
  get current(): ScriptedWatch {
    const watch = this.watches.at(-1);
    if (!watch) throw new Error("no watch opened");
    return watch;
  }
}
