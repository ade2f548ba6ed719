// A list-watch source (kube/lean-list-watch.ts) that a unit test drives: its lists answer from
// scripted pages, its watches stay open until the test sends events or ends them. A refused watch
// calls onDone before it resolves, as client-node's Watch does.
import type { ListPage, ListWatchSource, OpenWatch } from "../../kube/lean-list-watch";

/** One watch the source opened: the test sends its events and ends it. */
export interface ScriptedWatch<T> {
  query: Record<string, string>;
  send(type: string, object: T | object): void;
  end(error?: unknown): void;
  aborted: boolean;
}

export class ScriptedSource<T> implements ListWatchSource<T> {
  /** The query of every list call, in order. */
  readonly lists: Record<string, string>[] = [];
  readonly watches: ScriptedWatch<T>[] = [];
  /** The next watch is refused with this (then cleared). */
  refuseNextWatch: unknown;

  /** `pages`: each list call takes the next; an Error is thrown instead. The last one repeats. */
  constructor(public pages: (ListPage<T> | Error)[]) {}

  async list(query: Record<string, string>): Promise<ListPage<T>> {
    this.lists.push(query);
    const page = this.pages.length > 1 ? this.pages.shift() : this.pages[0];
    if (page === undefined) throw new Error("no page scripted");
    if (page instanceof Error) throw page;
    return page;
  }

  async watch(
    query: Record<string, string>,
    onEvent: (type: string, object: unknown) => void,
    onDone: (error: unknown) => void,
  ): Promise<OpenWatch> {
    let finished = false;
    const finish = (error: unknown): void => {
      if (finished) return;
      finished = true;
      onDone(error);
    };
    const watch: ScriptedWatch<T> = {
      query,
      aborted: false,
      send: (type, object) => void (!finished && onEvent(type, object)),
      end: (error = null) => finish(error),
    };
    this.watches.push(watch);
    if (this.refuseNextWatch !== undefined) {
      finish(this.refuseNextWatch);
      this.refuseNextWatch = undefined;
    }
    return {
      abort: () => {
        watch.aborted = true;
        finish(new Error("aborted"));
      },
    };
  }

  /** The watch opened last (fails the test when none is). */
  get current(): ScriptedWatch<T> {
    const watch = this.watches.at(-1);
    if (!watch) throw new Error("no watch opened");
    return watch;
  }
}
