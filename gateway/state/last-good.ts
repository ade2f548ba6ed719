// The last good view on local disk, so a gateway that restarts while the API server is down
// serves what it served before (and, mid-rollout, keeps its current revisions). Written
// atomically: a temporary file in the same folder, fsynced, then renamed over the old one, so a
// crash leaves either the old file or the new one, never half of one.
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ServedState } from "../selection/compose";

export const STATE_FILE = "last-good-view.json";
const FORMAT = 1;

export interface SavedView {
  format: number;
  version: number;
  /** ISO time the view became good (was first served). */
  goodAt: string;
  podName: string;
  state: ServedState;
}

export async function writeLastGood(dir: string, saved: Omit<SavedView, "format">): Promise<void> {
  await mkdir(dir, { recursive: true });
  const target = join(dir, STATE_FILE);
  const temporary = `${target}.${process.pid}.tmp`;
  const file = await open(temporary, "w", 0o600);
  try {
    await file.writeFile(JSON.stringify({ format: FORMAT, ...saved }));
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The saved view, undefined when there is none; a damaged file is an error naming the file. */
export async function readLastGood(dir: string): Promise<SavedView | undefined> {
  const path = join(dir, STATE_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const saved = JSON.parse(text) as Partial<SavedView>;
  const view = saved.state?.view;
  const lists = [view?.ingresses, view?.tlsPairs, view?.endpointSlices];
  const valid =
    saved.format === FORMAT &&
    typeof saved.version === "number" &&
    typeof saved.goodAt === "string" &&
    lists.every(list => Array.isArray(list));
  if (!valid) throw new Error(`${path}: not a saved gateway view (format ${FORMAT})`);
  return saved as SavedView;
}

/**
 * Runs writes one at a time, at most one per `minIntervalMs`, and skips those a newer one
 * replaces: at 20k Ingresses serializing the view costs tens of milliseconds of the event loop,
 * which a burst of changes should pay once, not once per change.
 */
export class CoalescingWriter {
  readonly #write: (saved: Omit<SavedView, "format">) => Promise<void>;
  readonly #onError: (error: unknown) => void;
  readonly #minIntervalMs: number;
  #pending: Omit<SavedView, "format"> | undefined;
  #running: Promise<void> | undefined;
  #lastWriteAt = -Infinity;
  #hurry: (() => void) | undefined;

  constructor(dir: string, onError: (error: unknown) => void, minIntervalMs = 1000) {
    this.#write = saved => writeLastGood(dir, saved);
    this.#onError = onError;
    this.#minIntervalMs = minIntervalMs;
  }

  save(saved: Omit<SavedView, "format">): void {
    this.#pending = saved;
    this.#running ??= this.#drain();
  }

  /** Writes what is pending now, and resolves when everything saved so far is on disk. */
  async flush(): Promise<void> {
    this.#hurry?.();
    await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const wait = this.#lastWriteAt + this.#minIntervalMs - performance.now();
      if (wait > 0) {
        await new Promise<void>(resolve => {
          const timer = setTimeout(resolve, wait);
          this.#hurry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#hurry = undefined;
      }
      const next = this.#pending;
      this.#pending = undefined;
      if (!next) break;
      this.#lastWriteAt = performance.now();
      try {
        await this.#write(next);
      } catch (error) {
        this.#onError(error);
      }
    }
    this.#running = undefined;
  }
}
