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
});
