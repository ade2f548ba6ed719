import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addQuery,
  editFlatHeaders,
  editHeaderLines,
  editResponseHead,
  ownResponseText,
  type HeaderEdits,
  withoutHeaderLines,
} from "./head-edits";

const edits: HeaderEdits = { set: [["X-Canary", "yes"]], add: [["Vary", "Origin"]] };

describe("header edits", () => {
  it("given header lines, replaces set names in any case and appends added ones", () => {
    assert.equal(
      editHeaderLines("Host: a\r\nx-canary: old\r\nVary: Accept\r\n", edits),
      "Host: a\r\nVary: Accept\r\nX-Canary: yes\r\nVary: Origin\r\n",
    );
  });
  it("given a response head, keeps the status line", () => {
    assert.equal(
      editResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 2", edits),
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Canary: yes\r\nVary: Origin",
    );
    assert.equal(
      editResponseHead("HTTP/1.1 204 No Content", edits),
      "HTTP/1.1 204 No Content\r\nX-Canary: yes\r\nVary: Origin",
    );
  });
  it("given Node's flat headers, does the same", () => {
    assert.deepEqual(editFlatHeaders(["Host", "a", "X-CANARY", "old"], edits), [
      "Host",
      "a",
      "X-Canary",
      "yes",
      "Vary",
      "Origin",
    ]);
  });
});

describe("addQuery", () => {
  it("appends with ? or &, and leaves the target alone without parameters", () => {
    assert.equal(addQuery("/p", [["canary", "1"]]), "/p?canary=1");
    assert.equal(
      addQuery("/p?a=b", [
        ["x", "1"],
        ["y", "2"],
      ]),
      "/p?a=b&x=1&y=2",
    );
    assert.equal(addQuery("/p", []), "/p");
  });
});

describe("ownResponseText", () => {
  const robots = { status: 200, headers: [["Content-Length", "99"] as const], body: "hi\n" };
  it("sets Content-Length from the body (replacing a given one) and Connection: close when closing", () => {
    assert.equal(
      ownResponseText(robots, true),
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nhi\n",
    );
  });
  it("given HEAD, sends no body", () => {
    assert.equal(
      ownResponseText(robots, false, true),
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
    );
  });
});

describe("withoutHeaderLines, generated", () => {
  /** The plain way: split, lower-case every name, keep the rest, each line with its CRLF. */
  function reference(lines: string, names: ReadonlySet<string>): string {
    return lines
      .split("\r\n")
      .filter((line, i, all) => i < all.length - 1 || line !== "")
      .filter(line => !names.has(line.slice(0, line.indexOf(":")).toLowerCase()))
      .map(line => `${line}\r\n`)
      .join("");
  }

  it("drops what the reference drops and keeps the rest byte for byte, over 2000 heads", () => {
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const NAMES = [
      "Vary",
      "vary",
      "VARY",
      "Access-Control-Allow-Origin",
      "X-A",
      "x-a",
      "X-AB",
      "X",
    ];
    const pick = () => NAMES[Math.floor(random() * NAMES.length)]!;
    for (let i = 0; i < 2000; i++) {
      const count = Math.floor(random() * 6);
      const lines = Array.from({ length: count }, () => `${pick()}: v${i}\r\n`).join("");
      const names = new Set(
        Array.from({ length: Math.floor(random() * 3) }, () => pick().toLowerCase()),
      );
      assert.equal(
        withoutHeaderLines(lines, names),
        reference(lines, names),
        JSON.stringify([lines, [...names]]),
      );
    }
  });
});
