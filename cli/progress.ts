// Progress of a long run (many files, many pods) as one line on a terminal, rewritten in place and
// at most every `intervalMs` (10 times a second by default), on stderr. When stderr is not a
// terminal (piped, redirected, CI) nothing is written at all, so what a script reads is unchanged.
import type { WriteStream } from "node:tty";

/** Where progress goes: process.stderr, or a test's stand-in. */
export type ProgressStream = Pick<WriteStream, "write"> & { isTTY?: boolean; columns?: number };

export interface Progress {
  /** Shows `text` in place of what was shown, unless the last line went out under intervalMs ago. */
  update(text: string): void;
  /** Erases the line: before other output on the same terminal, and at the end of the run. */
  clear(): void;
}

/** What a run without a terminal gets: nothing is ever written. */
export const NO_PROGRESS: Progress = { update: () => {}, clear: () => {} };

/** ANSI: to the start of the line, erase it. */
const ERASE_LINE = "\r\x1b[2K";

/** "reading 1200/5000 files…" */
export function counted(verb: string, done: number, total: number, noun: string): string {
  return `${verb} ${done}/${total} ${noun}…`;
}

export function progressOn(
  stream: ProgressStream | undefined,
  options: { now?: () => number; intervalMs?: number } = {},
): Progress {
  if (!stream?.isTTY) return NO_PROGRESS;
  const { now = () => performance.now(), intervalMs = 100 } = options;
  let shown = false;
  let lastAt = -Infinity;
  return {
    update(text) {
      const at = now();
      if (at - lastAt < intervalMs) return;
      lastAt = at;
      // A line wider than the terminal wraps, and the carriage return would rewrite only its tail.
      const width = stream.columns ? stream.columns - 1 : text.length;
      stream.write(`${ERASE_LINE}${text.slice(0, width)}`);
      shown = true;
    },
    clear() {
      if (!shown) return;
      stream.write(ERASE_LINE);
      shown = false;
    },
  };
}

/** `write`, erasing the progress line first, so a line of output never lands inside it. */
export function besideProgress(progress: Progress, write: (text: string) => void) {
  return (text: string): void => {
    progress.clear();
    write(text);
  };
}
