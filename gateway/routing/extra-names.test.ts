import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NodeHeadersFacts } from "../policy/request-values";
import { planRequest } from "../policy/route-traffic";
import { compileRoutes } from "./compile";
import { IncrementalRoutes } from "./incremental";
import { ingress, view } from "./testkit";
import { findRoute, type RouteTable } from "./table";

const P = "nginx.ingress.kubernetes.io/";

const shop = (annotations: Record<string, string>, host = "shop.example.com") =>
  ingress({
    name: "shop",
    annotations,
    rules: [{ host, paths: [{ path: "/", service: "shop" }] }],
  });
const other = (host: string, created = "2025-01-02T00:00:00Z") =>
  ingress({
    name: `other-${host}`,
    created,
    rules: [{ host, paths: [{ path: "/", service: "other" }] }],
  });

const serviceAt = (table: RouteTable, host: string, path = "/") =>
  findRoute(table, host, path)?.backend.key;

function answerAt(table: RouteTable, host: string, target: string, https = false) {
  const route = findRoute(table, host, target);
  assert.ok(route?.traffic, `a policy at ${host}`);
  const facts = new NodeHeadersFacts("GET", target, { host }, https);
  const plan = planRequest(route, route.traffic, facts);
  assert.equal(plan.kind, "answer");
  return plan.kind === "answer" ? [plan.answer.status, plan.answer.headers, plan.decision] : [];
}

describe("server-alias", () => {
  it("given ingress-nginx's example, serves each alias with the host's own rules", () => {
    const { table } = compileRoutes(
      view(1, [shop({ [`${P}server-alias`]: "store.example.com, *.shop.example.net" })]),
    );
    assert.equal(serviceAt(table, "store.example.com"), "default/shop:80");
    assert.equal(serviceAt(table, "eu.shop.example.net:8080"), "default/shop:80");
    assert.equal(serviceAt(table, "elsewhere.example.com"), undefined);
  });

  it("given an alias that another Ingress has a rule for, the rule wins, older or newer", () => {
    const alias = { [`${P}server-alias`]: "store.example.com" };
    for (const created of ["2024-01-01T00:00:00Z", "2025-06-01T00:00:00Z"]) {
      const { table, problems } = compileRoutes(
        view(1, [shop(alias), other("store.example.com", created)]),
      );
      assert.equal(serviceAt(table, "store.example.com"), "default/other:80");
      assert.equal(serviceAt(table, "shop.example.com"), "default/shop:80");
      assert.match(
        problems.join("\n"),
        /server-alias "store.example.com" is a host of an Ingress rule; ignored/,
      );
    }
  });

  it("given a newer Ingress of the same host with other aliases, the oldest one's aliases hold", () => {
    const newer = ingress({
      name: "newer",
      created: "2025-02-01T00:00:00Z",
      annotations: { [`${P}server-alias`]: "b.example.com" },
      rules: [{ host: "shop.example.com", paths: [{ path: "/b", service: "b" }] }],
    });
    const { table } = compileRoutes(
      view(1, [shop({ [`${P}server-alias`]: "a.example.com" }), newer]),
    );
    assert.equal(serviceAt(table, "a.example.com", "/b"), "default/b:80");
    assert.equal(serviceAt(table, "b.example.com"), undefined);
  });

  it("given an incremental change that adds a rule for the alias, the rule takes the name back", () => {
    const routes = new IncrementalRoutes({ compile: v => compileRoutes(v) });
    const alias = shop({ [`${P}server-alias`]: "store.example.com" });
    routes.compile(view(1, [alias]));
    const { table } = routes.compile(view(2, [alias, other("store.example.com")]));
    assert.equal(serviceAt(table, "store.example.com"), "default/other:80");
  });
});

describe("from-to-www-redirect", () => {
  it("given a bare host, redirects www.<host> to it with 308, keeping scheme, port and URI", () => {
    const { table } = compileRoutes(view(1, [shop({ [`${P}from-to-www-redirect`]: "true" })]));
    const [status, headers, decision] = answerAt(table, "www.shop.example.com", "/a/b?c=1");
    assert.deepEqual(
      [status, headers, decision],
      [308, [["Location", "http://shop.example.com/a/b?c=1"]], "from-to-www-redirect"],
    );
    const https = answerAt(table, "www.shop.example.com:8443", "/", true);
    assert.deepEqual(https[1], [["Location", "https://shop.example.com:8443"]]);
    assert.equal(serviceAt(table, "shop.example.com"), "default/shop:80");
  });

  it("given a www host, redirects the bare host to it", () => {
    const annotations = { [`${P}from-to-www-redirect`]: "true" };
    const { table } = compileRoutes(view(1, [shop(annotations, "www.shop.example.com")]));
    const [, headers] = answerAt(table, "shop.example.com", "/x/");
    assert.deepEqual(headers, [["Location", "http://www.shop.example.com/x"]]);
  });

  it("given an Ingress with a rule for the other name, no redirect: that host is served", () => {
    const { table } = compileRoutes(
      view(1, [shop({ [`${P}from-to-www-redirect`]: "true" }), other("www.shop.example.com")]),
    );
    assert.equal(serviceAt(table, "www.shop.example.com"), "default/other:80");
  });
});
