import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { LineBatch } from "./line-batch";

function sink(): { out: PassThrough; writes: string[] } {
  const out = new PassThrough();
  const writes: string[] = [];
  out.on("data", (chunk: Buffer) => writes.push(chunk.toString()));
  return { out, writes };
}

describe("LineBatch", () => {
  it("given several lines within the delay, writes them on in one write", async () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 20);
    for (const line of ["a\n", "b\n", "c\n"]) batch.push(line);
    await new Promise(resolve => setTimeout(resolve, 60));
    assert.deepEqual(writes, ["a\nb\nc\n"]);
  });

  it("given a flush before the delay, writes what it holds, and nothing when empty", async () => {
    const { out, writes } = sink();
    const batch = new LineBatch(out, 10_000);
    batch.push("last\n");
    batch.flush();
    batch.flush();
    await new Promise(resolve => setImmediate(resolve));
    assert.deepEqual(writes, ["last\n"]);
  });
});
