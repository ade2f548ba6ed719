import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseHashBy } from "../../core/annotations/load-balancing";
import { parseIp } from "../../core/net/ip";
import { hashKey } from "./hash-key";
import { NodeHeadersFacts } from "./request-values";

function keyOf(spec: string, facts: NodeHeadersFacts): string {
  const parsed = parseHashBy(spec);
  assert.ok(parsed.ok);
  return hashKey(parsed.value, facts);
}

describe("hashKey", () => {
  const facts = new NodeHeadersFacts(
    "GET",
    "/shop/cart?id=42&x=1",
    { host: "Shop.Example:8443", "x-user": "ann", cookie: "a=1; team=red" },
    true,
  );
  facts.client = parseIp("192.0.2.7")!;

  it("reads nginx's variables from the request", () => {
    assert.equal(keyOf("$request_uri", facts), "/shop/cart?id=42&x=1");
    assert.equal(keyOf("$uri-$args", facts), "/shop/cart-id=42&x=1");
    assert.equal(keyOf("$remote_addr", facts), "192.0.2.7");
    assert.equal(keyOf("${host}-$scheme-$request_method", facts), "shop.example-https-GET");
  });

  it("reads $remote_user from a Basic Authorization header as nginx does, else empty", () => {
    const basic = (authorization: string) =>
      new NodeHeadersFacts("GET", "/", { authorization }, false);
    const encoded = Buffer.from("alice:secret:with:colons").toString("base64");
    assert.equal(keyOf("$remote_user", basic(`Basic ${encoded}`)), "alice");
    assert.equal(keyOf("$remote_user", basic(`basic  ${encoded}`)), "alice");
    assert.equal(keyOf("$remote_user", basic("Bearer abc")), "");
    assert.equal(
      keyOf("$remote_user", basic(`Basic ${Buffer.from("nocolon").toString("base64")}`)),
      "",
    );
    assert.equal(keyOf("$remote_user", facts), "");
  });

  it("reads headers, cookies and arguments, absent ones as empty text", () => {
    assert.equal(keyOf("$http_x_user-$cookie_team-$arg_id", facts), "ann-red-42");
    assert.equal(keyOf("$http_x_none-$cookie_none-$arg_none", facts), "--");
  });
});
