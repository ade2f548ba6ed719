import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findHeadEnd, resumeAt } from "./head-end";

const scan = (text: string, from = 0) => findHeadEnd(Buffer.from(text, "latin1"), from);

describe("findHeadEnd", () => {
  it("finds the blank line", () => {
    assert.equal(scan("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), 23);
    assert.equal(scan("GET / HTTP/1.1\r\n\r\n"), 14);
  });
  it("waits while the head is unfinished, a lone CR at the end included", () => {
    for (const text of [
      "GET / HTTP/1.1",
      "GET / HTTP/1.1\r",
      "GET / HTTP/1.1\r\nHost: a\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\n\r",
    ]) {
      assert.equal(scan(text), -1, JSON.stringify(text));
    }
  });
  it("refuses a bare LF or CR wherever it is, without waiting for the blank line", () => {
    for (const text of [
      "GET / HTTP/1.1\nHost",
      "GET / HTTP/1.1\r\nX: 1\n",
      "GET /\rx HTTP/1.1",
      "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n",
      "\n",
    ]) {
      assert.equal(scan(text), -2, JSON.stringify(text));
    }
  });
  it("gives the same answer however the head is split", () => {
    const text = "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\r\n";
    for (let split = 1; split < text.length; split++) {
      const first = Buffer.from(text.slice(0, split), "latin1");
      assert.equal(findHeadEnd(first, 0), -1);
      assert.equal(
        findHeadEnd(Buffer.from(text, "latin1"), resumeAt(first)),
        text.length - 4,
        `split at ${split}`,
      );
    }
  });
});
