import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { celString, denyingPolicy } from "./admission-policy";

const constraints = { resourceRules: [{ resources: ["pods"] }] };

function policySpec(objects: ReturnType<typeof denyingPolicy>) {
  return objects[0]!.spec as {
    matchConditions: { name: string; expression: string }[];
    validations: { expression: string; messageExpression: string; reason: string }[];
  };
}

describe("denyingPolicy", () => {
  const objects = denyingPolicy("p", {
    matchConstraints: constraints,
    scope: [{ name: "in-scope", expression: "request.namespace != 'x'" }],
    rules: [
      { broken: "a", message: "first's" },
      { broken: "b || c", messageExpression: "'second: ' + request.name" },
      { broken: "d", message: "third" },
    ],
    reason: "Forbidden",
  });

  it("finds a broken rule in the match conditions, after the scope", () => {
    assert.deepEqual(policySpec(objects).matchConditions, [
      { name: "in-scope", expression: "request.namespace != 'x'" },
      { name: "breaks-a-rule", expression: "(a) || (b || c) || (d)" },
    ]);
  });

  it("refuses whatever matched, with the first broken rule's message", () => {
    const [validation] = policySpec(objects).validations;
    assert.equal(validation!.expression, "false");
    assert.equal(
      validation!.messageExpression,
      "(a) ? 'first\\'s' : ((b || c) ? 'second: ' + request.name : ('third'))",
    );
    assert.equal(validation!.reason, "Forbidden");
  });

  it("binds the policy to deny, failing closed", () => {
    const [policy, binding] = objects;
    assert.equal((policy!.spec as { failurePolicy: string }).failurePolicy, "Fail");
    assert.deepEqual(binding!.spec, { policyName: "p", validationActions: ["Deny"] });
  });

  it("a single rule's message is its own, without a condition", () => {
    const one = denyingPolicy("q", {
      matchConstraints: constraints,
      rules: [{ broken: "a", message: "only" }],
      reason: "Invalid",
    });
    assert.equal(policySpec(one).validations[0]!.messageExpression, "'only'");
    assert.deepEqual(policySpec(one).matchConditions, [
      { name: "breaks-a-rule", expression: "(a)" },
    ]);
  });

  it("refuses to build a policy without rules", () => {
    assert.throws(
      () => denyingPolicy("r", { matchConstraints: constraints, rules: [], reason: "Invalid" }),
      /policy r: no rules/,
    );
  });
});

describe("celString", () => {
  it("quotes any text as a CEL string literal", () => {
    assert.equal(celString("plain"), "'plain'");
    assert.equal(celString("it's"), "'it\\'s'");
    assert.equal(celString("a\\b"), "'a\\\\b'");
  });
});
