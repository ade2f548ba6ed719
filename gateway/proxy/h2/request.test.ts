import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_FRONT_DOOR } from "../request-rules";
import { checkH2Request, http1FieldsOf } from "./request";

const GET = [":method", "GET", ":scheme", "https", ":path", "/a", ":authority", "shop.test"];
const check = (raw: string[], endStream = true) =>
  checkH2Request(raw, endStream, DEFAULT_FRONT_DOOR);
const reason = (raw: string[], endStream = true) => {
  const result = check(raw, endStream);
  return "reason" in result ? result.reason : "served";
};

describe("checkH2Request", () => {
  it("routes on :authority, with the normalized target", () => {
    assert.deepEqual(check([...GET.slice(0, 4), ":path", "/a/../b", ":authority", "shop.test"]), {
      host: "shop.test",
      target: "/b",
      chunked: false,
    });
  });

  it("routes on Host when :authority is absent, and refuses a Host that differs from it", () => {
    const noAuthority = [":method", "GET", ":scheme", "https", ":path", "/", "host", "api.test"];
    assert.equal((check(noAuthority) as { host: string }).host, "api.test");
    assert.equal(reason([...GET, "host", "SHOP.test"]), "served");
    assert.equal(reason([...GET, "host", "api.test"]), "invalid-host");
    assert.equal(reason([...GET, "host", "shop.test", "host", "shop.test"]), "duplicate-host");
    assert.equal(reason([":method", "GET", ":scheme", "https", ":path", "/"]), "missing-host");
    assert.equal(reason([...GET.slice(0, 6), ":authority", "bad host"]), "invalid-host");
  });

  it("refuses connection-specific fields, TE other than trailers, and upper-case names", () => {
    for (const name of [
      "connection",
      "keep-alive",
      "proxy-connection",
      "transfer-encoding",
      "upgrade",
    ]) {
      assert.equal(reason([...GET, name, "x"]), "invalid-field", name);
    }
    assert.equal(reason([...GET, "te", "trailers"]), "served");
    assert.equal(reason([...GET, "te", "gzip"]), "invalid-field");
    assert.equal(reason([...GET, "X-Upper", "1"]), "invalid-field");
  });

  it("refuses missing, repeated and unknown pseudo-headers", () => {
    assert.equal(reason(GET.slice(2)), "invalid-request-line");
    assert.equal(reason([...GET, ":path", "/b"]), "invalid-request-line");
    assert.equal(reason([...GET, ":protocol", "websocket"]), "invalid-request-line");
    assert.equal(
      reason([":method", "GET", ":scheme", "ftp", ":path", "/", ":authority", "a"]),
      "invalid-request-line",
    );
  });

  it("refuses CONNECT and methods Node's parser would not pass on HTTP/1.1", () => {
    assert.equal(reason([":method", "CONNECT", ...GET.slice(2)]), "unknown-method");
    assert.equal(reason([":method", "BREW", ...GET.slice(2)]), "unknown-method");
  });

  it("accepts origin-form targets only, within the target limit", () => {
    assert.equal(
      reason([...GET.slice(0, 4), ":path", "https://x/", ":authority", "a"]),
      "invalid-target",
    );
    assert.equal(reason([...GET.slice(0, 4), ":path", "*", ":authority", "a"]), "invalid-target");
    const long = `/${"a".repeat(DEFAULT_FRONT_DOOR.maxTargetBytes)}`;
    assert.equal(reason([...GET.slice(0, 4), ":path", long, ":authority", "a"]), "target-too-long");
  });

  it("refuses a field line over the limit (431) and a bad content-length", () => {
    assert.equal(
      reason([...GET, "x-big", "a".repeat(DEFAULT_FRONT_DOOR.maxFieldBytes)]),
      "head-too-large",
    );
    assert.equal(reason([...GET, "content-length", "-1"]), "invalid-content-length");
    assert.equal(
      reason([...GET, "content-length", "1", "content-length", "1"]),
      "invalid-content-length",
    );
  });

  it("a body without content-length is streamed (chunked upstream); with it, it is not", () => {
    assert.equal((check(GET, false) as { chunked: boolean }).chunked, true);
    assert.equal(
      (check([...GET, "content-length", "3"], false) as { chunked: boolean }).chunked,
      false,
    );
    assert.equal((check(GET, true) as { chunked: boolean }).chunked, false);
  });
});

describe("http1FieldsOf", () => {
  it("drops pseudo-headers and joins cookie crumbs into one field where the first was", () => {
    assert.deepEqual(
      http1FieldsOf([...GET, "cookie", "a=1", "accept", "*/*", "cookie", "b=2", "cookie", "c=3"]),
      ["cookie", "a=1; b=2; c=3", "accept", "*/*"],
    );
    assert.deepEqual(http1FieldsOf(GET), []);
  });
});
