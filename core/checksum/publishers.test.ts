import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isTrustedPublication, parsePublisherNamespaces } from "./publishers";

describe("parsePublisherNamespaces", () => {
  it("given nothing or an empty list, trusts bulwark-system only", () => {
    for (const raw of [undefined, "", " , "]) {
      const parsed = parsePublisherNamespaces(raw);
      assert.deepEqual(parsed.ok && [...parsed.value], ["bulwark-system"]);
    }
  });
  it("given a list, trusts exactly those", () => {
    const parsed = parsePublisherNamespaces("bulwark-system, release ");
    assert.deepEqual(parsed.ok && [...parsed.value], ["bulwark-system", "release"]);
  });
  it("given a name that cannot be a namespace, names it", () => {
    const parsed = parsePublisherNamespaces("Team_A");
    assert.equal(parsed.ok, false);
    assert.match(JSON.stringify(!parsed.ok && parsed.errors), /Team_A/);
  });
});

describe("isTrustedPublication", () => {
  const publishers = new Set(["bulwark-system"]);
  it("trusts an object in a publisher namespace and nothing else", () => {
    assert.equal(
      isTrustedPublication({ metadata: { namespace: "bulwark-system" } }, publishers),
      true,
    );
    assert.equal(isTrustedPublication({ metadata: { namespace: "team-a" } }, publishers), false);
    assert.equal(isTrustedPublication({ metadata: {} }, publishers), false);
  });
});
