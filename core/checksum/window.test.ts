import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { trustWindow } from "./window";

const GRACE = 60_000;
const at = (name: string, createdMs: number) => ({ name, createdMs });

describe("trustWindow", () => {
  it("given nothing published, trusts nothing", () => {
    assert.deepEqual([...trustWindow([], 0, GRACE).trusted], []);
  });
  it("given one object, trusts it for good", () => {
    const window = trustWindow([at("a", 0)], 10 * GRACE, GRACE);
    assert.deepEqual([...window.trusted], ["a"]);
    assert.equal(window.closesAtMs, undefined);
  });
  it("given a new publish, trusts the one before it until the grace period ends", () => {
    const published = [at("old", 0), at("older", -5), at("new", 1000)];
    const during = trustWindow(published, 1000 + GRACE - 1, GRACE);
    assert.deepEqual([...during.trusted].sort(), ["new", "old"]);
    assert.equal(during.closesAtMs, 1000 + GRACE);
    const after = trustWindow(published, 1000 + GRACE, GRACE);
    assert.deepEqual([...after.trusted], ["new"]);
  });
  it("never trusts the ones before the previous, whatever their age", () => {
    const window = trustWindow([at("a", 0), at("b", 1), at("c", 2)], 3, GRACE);
    assert.equal(window.trusted.has("a"), false);
  });
  it("sorts an object without a creation time as the oldest", () => {
    const window = trustWindow([at("unknown", NaN), at("known", 0)], 0, GRACE);
    assert.ok(window.trusted.has("known"));
  });
  it("given no grace period, trusts the newest alone", () => {
    assert.deepEqual([...trustWindow([at("a", 0), at("b", 1)], 1, 0).trusted], ["b"]);
  });
});
