import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { namespacedName, objectKey } from "./object-key";

describe("objectKey", () => {
  it("is namespace/name for a namespaced object, name for a cluster-scoped one", () => {
    assert.equal(objectKey({ metadata: { namespace: "shop", name: "web" } }), "shop/web");
    assert.equal(objectKey({ metadata: { name: "node-1" } }), "node-1");
    assert.equal(objectKey({ metadata: { namespace: "", name: "node-1" } }), "node-1");
  });

  it("spells a key the same from its parts", () => {
    assert.equal(
      namespacedName("shop", "web"),
      objectKey({ metadata: { namespace: "shop", name: "web" } }),
    );
    assert.equal(namespacedName(undefined, "node-1"), "node-1");
  });

  it("is empty for an object with no name (callers skip those)", () => {
    assert.equal(objectKey({}), "");
  });
});
