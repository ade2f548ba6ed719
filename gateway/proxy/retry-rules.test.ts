import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  CONNECT_TIMEOUT,
  isConnectFailure,
  isIdempotent,
  isUpstreamTimeout,
  READ_TIMEOUT,
  UpstreamTimeout,
} from "./retry-rules";

describe("UpstreamTimeout", () => {
  it("carries the connect-timeout code before the connection is made, the read-timeout code after", () => {
    assert.equal(new UpstreamTimeout(false).code, CONNECT_TIMEOUT);
    assert.equal(new UpstreamTimeout(false).message, "upstream connect timed out");
    assert.equal(new UpstreamTimeout(true).code, READ_TIMEOUT);
    assert.equal(new UpstreamTimeout(true).message, "upstream timed out");
  });
});

describe("failure classes", () => {
  const cases: [string | undefined, { timeout: boolean; connect: boolean }][] = [
    [CONNECT_TIMEOUT, { timeout: true, connect: true }],
    // The request may have reached the application: never retried elsewhere.
    [READ_TIMEOUT, { timeout: true, connect: false }],
    ["ECONNREFUSED", { timeout: false, connect: true }],
    ["EHOSTUNREACH", { timeout: false, connect: true }],
    ["ECONNRESET", { timeout: false, connect: false }],
    ["EPIPE", { timeout: false, connect: false }],
    [undefined, { timeout: false, connect: false }],
  ];
  for (const [code, expected] of cases) {
    it(`given ${code}, is ${expected.timeout ? "" : "not "}a timeout and ${expected.connect ? "" : "not "}a connect failure`, () => {
      assert.equal(isUpstreamTimeout(code), expected.timeout);
      assert.equal(isConnectFailure(code), expected.connect);
    });
  }
  it("repeats only the methods RFC 9110 calls idempotent", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]) {
      assert.ok(isIdempotent(method), method);
    }
    for (const method of ["POST", "PATCH", "CONNECT", "get"])
      assert.ok(!isIdempotent(method), method);
  });
});
