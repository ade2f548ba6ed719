import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addQuery,
  editFlatHeaders,
  editHeaderLines,
  editResponseHead,
  ownResponseText,
  type HeaderEdits,
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
