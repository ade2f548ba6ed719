import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PeprMutateRequest, PeprValidateRequest } from "pepr";
import { linearClones, peprRamda } from "./linear-clone";
import { podReview } from "../../test/fixtures/pod-review";

describe("linearClones", () => {
  it("copies JSON deeply: equal, not the same objects", () => {
    const ramda = { clone: <T>(value: T): T => value };
    linearClones(ramda);
    const original = { a: [{ b: 1 }, { b: 2 }], c: { d: null, e: "x" } };
    const copy = ramda.clone(original);
    assert.deepEqual(copy, original);
    assert.notEqual(copy, original);
    assert.notEqual(copy.a[0], original.a[0]);
    copy.c.e = "changed";
    assert.equal(original.c.e, "x");
  });

  it("hands what the structured clone algorithm cannot copy, and primitives, to the original", () => {
    const seen: unknown[] = [];
    const ramda = {
      clone: <T>(value: T): T => {
        seen.push(value);
        return value;
      },
    };
    linearClones(ramda);
    const withFunction = { f: () => 1 };
    assert.equal(ramda.clone(withFunction), withFunction);
    assert.equal(ramda.clone(7), 7);
    assert.deepEqual(seen, [withFunction, 7]);
  });

  it("is applied once however often it is called", () => {
    let calls = 0;
    const ramda = {
      clone: <T>(value: T): T => {
        calls++;
        return value;
      },
    };
    linearClones(ramda);
    const once = ramda.clone;
    linearClones(ramda);
    assert.equal(ramda.clone, once);
    ramda.clone(() => 1);
    assert.equal(calls, 1);
  });

  it("is what Pepr's mutate and validate requests copy the review's object with", () => {
    linearClones();
    const ramda = peprRamda();
    const patched = ramda.clone;
    const copied: unknown[] = [];
    ramda.clone = <T>(value: T): T => {
      copied.push(value);
      return patched(value);
    };
    try {
      const review = podReview(20_000);
      const mutate = new PeprMutateRequest(review as never);
      const validate = new PeprValidateRequest(review as never);
      assert.deepEqual(copied, [review.object, review.object]);
      assert.deepEqual(mutate.Raw, review.object);
      assert.notEqual(mutate.Raw, review.object);
      assert.notEqual(validate.Raw, review.object);
    } finally {
      ramda.clone = patched;
    }
  });
});
