import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CONFIG_MAPS, ENDPOINT_SLICES, NODES, PODS, resourcePath } from "./api-paths";

describe("resourcePath", () => {
  it("builds collection, namespaced collection, cluster-scoped and namespaced object paths", () => {
    assert.equal(resourcePath(PODS), "/api/v1/pods");
    assert.equal(resourcePath(PODS, { namespace: "shop" }), "/api/v1/namespaces/shop/pods");
    assert.equal(resourcePath(NODES, { name: "edge-1" }), "/api/v1/nodes/edge-1");
    assert.equal(
      resourcePath(ENDPOINT_SLICES, { namespace: "shop", name: "web-x7k" }),
      "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/web-x7k",
    );
  });

  it("keeps every hostile segment inside its own path segment", () => {
    // Names the API server would never store, but a caller might be handed (an annotation, a
    // review): none may change which object the path addresses.
    const hostile = ["x?watch=1", "y#frag", "sp ace", "ünï", "a\\b", "...", ".x"];
    for (const value of hostile) {
      const path = resourcePath(CONFIG_MAPS, { namespace: value, name: value });
      const url = new URL(path, "https://api.invalid");
      assert.equal(url.pathname, path, `${value}: the path is kept as written`);
      assert.equal(url.search, "", `${value}: no query`);
      assert.equal(url.hash, "", `${value}: no fragment`);
      const segments = url.pathname.split("/").map(decodeURIComponent);
      assert.deepEqual(segments, ["", "api", "v1", "namespaces", value, "configmaps", value]);
    }
  });

  it("refuses what client-go refuses: empty, dot segments, a slash or a percent sign", () => {
    assert.throws(() => resourcePath(NODES, { name: "" }), /nodes: name is empty/);
    assert.throws(
      () => resourcePath(PODS, { namespace: "", name: "web" }),
      /pods: namespace is empty/,
    );
    for (const name of [".", ".."])
      assert.throws(
        () => resourcePath(NODES, { name }),
        new RegExp(`name may not be "${name.replace(/\./g, "\\.")}"`),
      );
    for (const name of ["a/../b", "a/b", "p%2Fq", "%"])
      assert.throws(
        () => resourcePath(PODS, { namespace: "shop", name }),
        /pods: name may not contain "\/" or "%"/,
      );
    assert.throws(
      () => resourcePath(PODS, { namespace: "..", name: "web" }),
      /namespace may not be/,
    );
  });
});
