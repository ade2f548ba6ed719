import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDefaultClass } from "./class";

describe("isDefaultClass", () => {
  const withAnnotation = (value: string) => ({
    metadata: { annotations: { "ingressclass.kubernetes.io/is-default-class": value } },
  });
  it('given the annotation exactly "true", returns true', () =>
    assert.equal(isDefaultClass(withAnnotation("true")), true));
  it("given another value or no class, returns false", () => {
    assert.equal(isDefaultClass(withAnnotation("True")), false);
    assert.equal(isDefaultClass(withAnnotation("false")), false);
    assert.equal(isDefaultClass({ metadata: {} }), false);
    assert.equal(isDefaultClass(undefined), false);
  });
});
