import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Backend, type Route } from "../routing/table";
import { compileErrorPages, errorHeaders, errorTarget, routeHeaders } from "./error-pages";

const route = {
  ingress: "shop/storefront",
  backend: new Backend("shop/web:http", []),
} as unknown as Route;

describe("error pages", () => {
  it("tells the error backend the route's namespace, Ingress, Service and port as written", () => {
    assert.deepEqual(routeHeaders(route), [
      ["X-Namespace", "shop"],
      ["X-Ingress-Name", "storefront"],
      ["X-Service-Name", "web"],
      ["X-Service-Port", "http"],
    ]);
  });

  it("given an intercepted 404, sends X-Code, X-Format from Accept and X-Original-URI", () => {
    const about = routeHeaders(route);
    const headers = errorHeaders(about, 404, { target: "/a?b=1", accept: "text/html" }, true);
    assert.deepEqual(headers.slice(0, 3), [
      ["X-Code", "404"],
      ["X-Format", "text/html"],
      ["X-Original-URI", "/a?b=1"],
    ]);
  });

  it("given no Accept and no original URI (the no-endpoint case), leaves both out", () => {
    const headers = errorHeaders([], 503, { target: "/a", accept: undefined }, false);
    assert.deepEqual(headers, [["X-Code", "503"]]);
  });

  it("rewrites the path to '/' and keeps the query, as nginx's `rewrite (.*) / break`", () => {
    assert.equal(errorTarget("/deep/path"), "/");
    assert.equal(errorTarget("/deep/path?x=1&y=2"), "/?x=1&y=2");
  });

  it("given no codes, compiles to nothing", () => {
    assert.equal(compileErrorPages(route, [], undefined), undefined);
    assert.deepEqual(
      [...(compileErrorPages(route, [404, 503], undefined)?.codes ?? [])],
      [404, 503],
    );
  });
});
