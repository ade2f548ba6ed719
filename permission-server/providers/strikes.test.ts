// The README's "What counts as a strike" table, held to the code: every HTTP status the table
// names is classified as it says, and every status from 100 to 599 is named.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { classifyFailure } from "./http";

const README = readFileSync(join(__dirname, "..", "README.md"), "utf8");

/** "HTTP 400-407, 409-428" → the statuses it names. */
function statuses(cell: string): number[] {
  const list = /^HTTP ([\d\-, ]+)/.exec(cell)?.[1] ?? "";
  return list
    .split(",")
    .map(part => part.trim())
    .filter(Boolean)
    .flatMap(part => {
      const [from, to = from] = part.split("-").map(Number) as [number, number?];
      return Array.from({ length: to! - from + 1 }, (_, i) => from + i);
    });
}

const rows = README.split("\n")
  .filter(line => line.startsWith("| HTTP "))
  .map(line => line.split("|").map(cell => cell.trim()))
  .map(([, call = "", outcome = ""]) => ({ call, strike: outcome.startsWith("strike") }));

describe("what counts as a strike (permission-server/README.md)", () => {
  it("the table has its HTTP rows", () => assert.equal(rows.length, 2));

  it("every HTTP status it names is classified as it says, and every status is named once", () => {
    const named = new Map<number, boolean>();
    for (const { call, strike } of rows) {
      for (const status of statuses(call)) {
        assert.ok(!named.has(status), `HTTP ${status} is in two rows`);
        named.set(status, strike);
      }
    }
    for (let status = 100; status <= 599; status++) {
      assert.ok(named.has(status), `HTTP ${status} is not in the table`);
      const outcome = classifyFailure("grant", { status, headers: new Headers(), text: "" });
      assert.equal("denied" in outcome, named.get(status), `HTTP ${status}`);
    }
  });
});
