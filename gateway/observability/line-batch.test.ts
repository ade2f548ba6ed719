import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { LineBatch } from "./line-batch";

/** A stream that records each write as it is made. */
function sink(): { out: Writable; writes: string[] } {
  const writes: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  return { out, writes };
}

describe("LineBatch", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());

  it("given several lines within the delay, writes them on in one write when the delay ends", () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 20);
    batch.push("a\n");
    mock.timers.tick(10);
    for (const line of ["b\n", "c\n"]) batch.push(line);
    mock.timers.tick(9);
    assert.deepEqual(writes, [], "nothing before the delay since the first line");
    mock.timers.tick(1);
    assert.deepEqual(writes, ["a\nb\nc\n"]);
  });

  it("given a line after a batch left, starts a new delay for it", () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 20);
    batch.push("a\n");
    mock.timers.tick(20);
    batch.push("b\n");
    mock.timers.tick(19);
    assert.deepEqual(writes, ["a\n"]);
    mock.timers.tick(1);
    assert.deepEqual(writes, ["a\n", "b\n"]);
  });

  it("given a flush before the delay, writes what it holds, and nothing when empty", () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 10_000);
    batch.push("last\n");
    batch.flush();
    batch.flush();
    assert.deepEqual(writes, ["last\n"]);
    mock.timers.tick(10_000);
    assert.deepEqual(writes, ["last\n"], "the flush cancelled the pending write");
  });

  it("given lines past the batch's size, writes the batch early and keeps every byte in order", () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 10_000);
    const lines = Array.from({ length: 3000 }, (_, i) => `{"n":${i},"pad":"${"x".repeat(200)}"}\n`);
    for (const line of lines) batch.push(line);
    batch.flush();
    assert.ok(writes.length > 1, "more than one write for about 600 KiB");
    assert.equal(writes.join(""), lines.join(""));
  });

  it("given a stream slow to finish its writes, never reuses a buffer it still holds", async () => {
    // The stream keeps each chunk (not a copy) and reads its bytes only when it finishes the
    // write, later, as a file's stream does; a buffer taken back before its write finished
    // would show here as changed bytes.
    const held: Buffer[] = [];
    const finishes: (() => void)[] = [];
    const out = new Writable({
      highWaterMark: 1 << 30,
      write(chunk: Buffer, _encoding, done) {
        finishes.push(() => {
          held.push(Buffer.from(chunk));
          done();
        });
      },
    });
    const batch = new LineBatch(out, 10_000);
    const lines = Array.from({ length: 4000 }, (_, i) => `{"n":${i},"pad":"${"y".repeat(150)}"}\n`);
    for (const [i, line] of lines.entries()) {
      batch.push(line);
      // Some writes finish midway, so their buffers are free to take new batches.
      if (i % 700 === 0) while (finishes.length > 0) finishes.splice(0).forEach(done => done());
      await new Promise(setImmediate);
    }
    batch.flush();
    while (finishes.length > 0) finishes.splice(0).forEach(done => done());
    assert.ok(held.length > 4, "several batches of about 64 KiB");
    assert.equal(Buffer.concat(held).toString(), lines.join(""));
  });

  it("given non-ASCII text and a line longer than a batch, writes them whole as UTF-8", () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 10_000);
    const long = `{"path":"/${"é".repeat(100_000)}"}\n`;
    batch.push('{"ua":"Mozilla — ünïcode ✓ 😀"}\n');
    batch.push(long);
    batch.push("tail\n");
    batch.flush();
    assert.equal(writes.join(""), `{"ua":"Mozilla — ünïcode ✓ 😀"}\n${long}tail\n`);
  });
});
