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
