import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { withoutBookkeeping } from "./bookkeeping";

describe("withoutBookkeeping", () => {
  it("drops managedFields and the last-applied annotation, keeps the rest", () => {
    const object = {
      metadata: {
        name: "x",
        managedFields: [{ manager: "kubectl" }],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", keep: "me" },
      },
      spec: { a: 1 },
    };
    assert.deepEqual(withoutBookkeeping(object), {
      metadata: { name: "x", annotations: { keep: "me" } },
      spec: { a: 1 },
    });
    assert.equal(object.metadata.managedFields.length, 1, "the original is not changed");
  });

  it("leaves an object without metadata or bookkeeping as it is", () => {
    const bare = { metadata: undefined, spec: {} };
    assert.equal(withoutBookkeeping(bare), bare);
    const plain = { metadata: { name: "y", annotations: { a: "1" } } };
    assert.deepEqual(withoutBookkeeping(plain), plain);
  });
});
