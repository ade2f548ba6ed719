import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientIp, downstreamResponseHeaders, upstreamRequestHeaders } from "./headers";

const client = { ip: "10.1.2.3", proto: "https", port: "8443", requestId: "r1" };

describe("upstreamRequestHeaders", () => {
  it("sends the exchange's X-Request-ID in place of the client's (ingress-nginx's $req_id)", () => {
    const out = upstreamRequestHeaders(
      ["X-Request-ID", "from-client", "x-request-id", "again", "Accept", "*/*"],
      { ...client, requestId: "from-client, again" },
      "a.test",
    );
    const ids = out.filter((_, i) => i % 2 === 0 && out[i]!.toLowerCase() === "x-request-id");
    assert.deepEqual(ids, ["X-Request-ID"], "one X-Request-ID goes upstream");
    assert.equal(out[out.indexOf("X-Request-ID") + 1], "from-client, again");
  });

  it("drops hop-by-hop headers and those Connection names, keeps the rest in order", () => {
    const out = upstreamRequestHeaders(
      [
        "Host",
        "a.test",
        "Connection",
        "keep-alive, X-Trace",
        "X-Trace",
        "1",
        "TE",
        "trailers",
        "Keep-Alive",
        "5",
        "Accept",
        "*/*",
        "Transfer-Encoding",
        "chunked",
        "Proxy-Connection",
        "x",
        "Upgrade",
        "h2c",
      ],
      client,
      "a.test",
    );
    assert.deepEqual(out.slice(0, 4), ["Host", "a.test", "Accept", "*/*"]);
  });

  it("appends the client to X-Forwarded-For and replaces the other forwarded headers", () => {
    const out = upstreamRequestHeaders(
      [
        "X-Forwarded-For",
        "1.1.1.1",
        "x-forwarded-for",
        "2.2.2.2",
        "X-Forwarded-Proto",
        "gopher",
        "X-Real-IP",
        "6.6.6.6",
        "X-Forwarded-Host",
        "evil",
        "X-Forwarded-Port",
        "1",
      ],
      client,
      "a.test:8443",
    );
    assert.deepEqual(out, [
      "Host",
      "a.test:8443",
      "X-Request-ID",
      "r1",
      "X-Forwarded-For",
      "1.1.1.1, 2.2.2.2, 10.1.2.3",
      "X-Real-IP",
      "10.1.2.3",
      "X-Forwarded-Proto",
      "https",
      "X-Forwarded-Host",
      "a.test:8443",
      "X-Forwarded-Port",
      "8443",
    ]);
  });

  it("given an upgrade, asks the upstream for it", () => {
    const out = upstreamRequestHeaders(
      ["Connection", "Upgrade", "Upgrade", "websocket"],
      client,
      "a",
      { upgrade: "websocket" },
    );
    assert.deepEqual(out.slice(-4), ["Connection", "upgrade", "Upgrade", "websocket"]);
  });
});

describe("upstreamRequestHeaders: the front door", () => {
  it("never lets Connection remove Host, the framing or the gateway's own fields", () => {
    const out = upstreamRequestHeaders(
      [
        "Host",
        "a.test",
        "Connection",
        "Host, Content-Length, Transfer-Encoding, X-Forwarded-For, X-Real-IP, X-Other",
        "Content-Length",
        "3",
        "X-Other",
        "1",
      ],
      client,
      "a.test",
    );
    assert.deepEqual(out.slice(0, 4), ["Host", "a.test", "Content-Length", "3"]);
    assert.ok(!out.includes("X-Other"));
    assert.ok(out.includes("X-Real-IP"));
  });

  it("frames a chunked body chunked whatever the method, and drops underscore names", () => {
    const raw = ["Host", "a", "X_Secret", "1", "X-Ok", "2"];
    const out = upstreamRequestHeaders(raw, client, "a", { chunked: true });
    assert.deepEqual(out.slice(0, 4), ["Host", "a", "X-Ok", "2"]);
    assert.deepEqual(out.slice(-2), ["Transfer-Encoding", "chunked"]);
    const kept = upstreamRequestHeaders(raw, client, "a", { underscores: true });
    assert.deepEqual(kept.slice(0, 4), ["Host", "a", "X_Secret", "1"]);
  });
});

describe("downstreamResponseHeaders", () => {
  it("drops a 204's Content-Length (HTTP/2 clients refuse it), and keeps it on other statuses", () => {
    const raw = ["Content-Length", "10", "X-Kept", "1"];
    assert.deepEqual(downstreamResponseHeaders(raw, 204), ["X-Kept", "1"]);
    assert.deepEqual(downstreamResponseHeaders(raw, 304), raw);
    assert.deepEqual(downstreamResponseHeaders(raw, 200), raw);
  });

  it("drops hop-by-hop response headers, keeps repeated ones", () => {
    assert.deepEqual(
      downstreamResponseHeaders([
        "Set-Cookie",
        "a=1",
        "Connection",
        "close",
        "Transfer-Encoding",
        "chunked",
        "Set-Cookie",
        "b=2",
        "Keep-Alive",
        "timeout=5",
      ]),
      ["Set-Cookie", "a=1", "Set-Cookie", "b=2"],
    );
  });
});

describe("clientIp", () => {
  it("unwraps IPv4-mapped IPv6 addresses", () => {
    assert.equal(clientIp("::ffff:127.0.0.1"), "127.0.0.1");
    assert.equal(clientIp("::1"), "::1");
    assert.equal(clientIp(undefined), "");
  });
});
