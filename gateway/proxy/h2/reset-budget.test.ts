import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ResetBudget } from "./reset-budget";

describe("ResetBudget", () => {
  it("a loop of open-and-cancel spends the budget after `capacity` cancels", () => {
    const budget = new ResetBudget(4);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => budget.cancelled()),
      [true, true, true, true, false],
    );
  });

  it("answers delivered earn cancels back, never beyond the capacity", () => {
    const budget = new ResetBudget(2);
    for (let i = 0; i < 10; i++) budget.answered();
    assert.equal(budget.cancelled(), true);
    assert.equal(budget.cancelled(), true);
    budget.answered();
    assert.equal(budget.cancelled(), true);
    assert.equal(budget.cancelled(), false);
  });

  it("a browser cancelling now and then among many answers never runs out", () => {
    const budget = new ResetBudget(8);
    for (let i = 0; i < 1000; i++) {
      budget.answered();
      budget.answered();
      assert.equal(budget.cancelled(), true);
    }
  });
});
