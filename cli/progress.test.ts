import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { besideProgress, counted, progressOn, type ProgressStream } from "./progress";

const ERASE = "\r\x1b[2K";

/** A stand-in for process.stderr that records what is written, on a clock the test moves. */
function terminal(isTTY: boolean, columns?: number) {
  const written: string[] = [];
  let ms = 0;
  const stream: ProgressStream = {
    isTTY,
    ...(columns === undefined ? {} : { columns }),
    write: (text: string | Uint8Array) => (written.push(String(text)), true),
  };
  return { stream, written, now: () => ms, advance: (by: number) => void (ms += by) };
}

describe("progress on a terminal", () => {
  it("writes nothing at all when the stream is not a TTY, or there is none", () => {
    const piped = terminal(false);
    for (const progress of [progressOn(piped.stream, { now: piped.now }), progressOn(undefined)]) {
      for (let i = 1; i <= 50; i++) {
        progress.update(counted("reading", i, 50, "files"));
        piped.advance(1000);
      }
      progress.clear();
    }
    assert.deepEqual(piped.written, []);
  });

  it("on a TTY, rewrites one line in place and erases it when cleared, once", () => {
    const tty = terminal(true);
    const progress = progressOn(tty.stream, { now: tty.now });
    progress.update(counted("reading", 1, 5000, "files"));
    tty.advance(150);
    progress.update(counted("reading", 1200, 5000, "files"));
    progress.clear();
    progress.clear();
    assert.deepEqual(tty.written, [
      `${ERASE}reading 1/5000 files…`,
      `${ERASE}reading 1200/5000 files…`,
      ERASE,
    ]);
  });

  it("draws at most once per interval: 1000 updates over one second are 10 lines", () => {
    const tty = terminal(true);
    const progress = progressOn(tty.stream, { now: tty.now, intervalMs: 100 });
    for (let i = 1; i <= 1000; i++) {
      progress.update(counted("stripping finalizers from", i, 1000, "pods"));
      tty.advance(1);
    }
    assert.equal(tty.written.length, 10);
    assert.deepEqual(tty.written.slice(0, 2), [
      `${ERASE}stripping finalizers from 1/1000 pods…`,
      `${ERASE}stripping finalizers from 101/1000 pods…`,
    ]);
  });

  it("cuts a line to the terminal's width, so the carriage return rewrites all of it", () => {
    const tty = terminal(true, 12);
    progressOn(tty.stream, { now: tty.now }).update("reading 1200/5000 files…");
    assert.deepEqual(tty.written, [`${ERASE}reading 120`]);
  });

  it("clears nothing it did not draw", () => {
    const tty = terminal(true);
    progressOn(tty.stream, { now: tty.now }).clear();
    assert.deepEqual(tty.written, []);
  });

  it("erases the line before other output to the terminal, never writing into it", () => {
    const tty = terminal(true);
    const progress = progressOn(tty.stream, { now: tty.now });
    const say = besideProgress(progress, text => void tty.written.push(text));
    progress.update("resetting 3/9 pods…");
    say("reset ns/pod-3\n");
    say("reset ns/pod-4\n");
    assert.deepEqual(tty.written, [
      `${ERASE}resetting 3/9 pods…`,
      ERASE,
      "reset ns/pod-3\n",
      "reset ns/pod-4\n",
    ]);
  });
});
