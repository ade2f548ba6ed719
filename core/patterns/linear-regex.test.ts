import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  checkLinearPattern,
  compileLinear,
  linearPatternProblem,
  MAX_INGRESS_PATTERN_INSTRUCTIONS,
  MAX_PATTERN_INSTRUCTIONS,
  PathPatternBudget,
  MAX_PATTERN_LENGTH,
} from "./linear-regex";

describe("compileLinear", () => {
  it("answers the catastrophic-backtracking attack on ^(a+)+$ in milliseconds", () => {
    const pattern = compileLinear("^(a+)+$");
    const attack = `${"a".repeat(27)}!`;
    const started = performance.now();
    assert.equal(pattern.test(attack), false);
    // V8's backtracking engine needs seconds for this input (4.2 s measured); linear time needs µs.
    // A generous bound: this asserts the engine, not the machine's speed.
    assert.ok(performance.now() - started < 1000);
    assert.equal(pattern.test("aaaa"), true);
  });

  it("matches unanchored, as RegExp.test and ngx.re.match do", () => {
    assert.equal(compileLinear("v2").test("app-v2-beta"), true);
    assert.equal(compileLinear("^v2").test("app-v2"), false);
  });

  it("gives capture groups for rewrite-target, undefined for a group that took no part", () => {
    assert.deepEqual(compileLinear("^/api(/|$)(.*)").exec("/api/users/1"), [
      "/api/users/1",
      "/",
      "users/1",
    ]);
    assert.deepEqual(compileLinear("^/(a)?(b)").exec("/b"), ["/b", undefined, "b"]);
    assert.equal(compileLinear("^/x").exec("/y"), null);
  });

  it("folds case when asked, as nginx's ~* locations", () => {
    assert.equal(compileLinear("^/API", { ignoreCase: true }).test("/api/x"), true);
    assert.equal(compileLinear("^/API").test("/api/x"), false);
  });

  it("agrees with V8 on patterns both engines take, over generated inputs", () => {
    const patterns = [
      "^v[0-9]+$",
      "(canary|beta)",
      "^[a-f0-9]{8}-",
      "x*y+z?",
      "^/a/[^/]+/b$",
      "\\d\\w\\s",
    ];
    const alphabet = ["v", "1", "9", "a", "f", "-", "/", "b", "x", "y", "z", " ", "c", "_"];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (const source of patterns) {
      const ours = compileLinear(source);
      const v8 = new RegExp(source);
      for (let n = 0; n < 300; n++) {
        const input = Array.from(
          { length: next() % 12 },
          () => alphabet[next() % alphabet.length],
        ).join("");
        assert.equal(ours.test(input), v8.test(input), `${source} on ${JSON.stringify(input)}`);
      }
    }
  });
});

describe("linearPatternProblem", () => {
  it("refuses what only a backtracking engine can run, naming the construct", () => {
    assert.match(linearPatternProblem("(a)\\1") ?? "", /invalid escape sequence: `\\1`/);
    assert.match(linearPatternProblem("foo(?=bar)") ?? "", /Perl syntax: `\(\?=`/);
    assert.match(linearPatternProblem("(unclosed") ?? "", /missing closing \)/);
    assert.equal(linearPatternProblem("^(a+)+$"), undefined);
  });
});

describe("the bounds on a pattern", () => {
  it("refuses a pattern longer than MAX_PATTERN_LENGTH unread, naming its length", () => {
    const source = "a".repeat(MAX_PATTERN_LENGTH + 1);
    assert.deepEqual(checkLinearPattern(source), {
      ok: false,
      problem: `is ${MAX_PATTERN_LENGTH + 1} characters long, more than the ${MAX_PATTERN_LENGTH} a pattern may have`,
      tooLarge: true,
    });
    assert.equal(checkLinearPattern("a".repeat(MAX_PATTERN_LENGTH)).ok, true);
  });

  it("refuses a short pattern whose program is larger than MAX_PATTERN_INSTRUCTIONS", () => {
    // 66 characters, 6 002 instructions: RE2 spells each counted repeat out.
    const check = checkLinearPattern("[a-z]{1000}".repeat(6));
    assert.equal(check.ok, false);
    assert.ok(!check.ok && check.tooLarge);
    assert.match(
      check.problem,
      new RegExp(`^compiles to 6002 RE2 instructions, more than the ${MAX_PATTERN_INSTRUCTIONS}`),
    );
    assert.throws(() => compileLinear("[a-z]{1000}".repeat(6)), /6002 RE2 instructions/);
  });

  it("tells a pattern's size, and real patterns are far below the bound", () => {
    const check = checkLinearPattern("[a-z]{1000}".repeat(4));
    assert.ok(check.ok);
    assert.equal(check.instructions, 4002);
    assert.equal(check.pattern.test("a".repeat(4000)), true);
    const real = compileLinear("^/api/v[0-9]+/users/([^/]+)/orders/(.*)$", { ignoreCase: true });
    assert.ok(real.instructions < 50, `${real.instructions} instructions`);
  });

  it("reports a syntax error as not too large", () => {
    assert.deepEqual(checkLinearPattern("(a"), {
      ok: false,
      problem: "error parsing regexp: missing closing ): `(a`",
      tooLarge: false,
    });
  });
});

describe("PathPatternBudget", () => {
  it("charges each path's instructions and is spent past MAX_INGRESS_PATTERN_INSTRUCTIONS", () => {
    const budget = new PathPatternBudget();
    const path = `/${"[a-z]{1000}".repeat(4)}`;
    let checked = 0;
    while (!budget.spent) {
      assert.ok(budget.check(path).ok);
      checked++;
    }
    assert.equal(checked, Math.floor(MAX_INGRESS_PATTERN_INSTRUCTIONS / 4004) + 1);
  });

  it("admits paths until spent: the one that crosses is marked, the next is not compiled", () => {
    const budget = new PathPatternBudget();
    const path = `/${"[a-z]{1000}".repeat(4)}`;
    const crossings: boolean[] = [];
    for (let k = 0; k < Math.floor(MAX_INGRESS_PATTERN_INSTRUCTIONS / 4004) + 1; k++) {
      const admitted = budget.admit(path);
      assert.ok(!admitted.spent && admitted.check.ok);
      crossings.push(admitted.crossed);
    }
    assert.deepEqual(crossings.lastIndexOf(true), crossings.length - 1);
    assert.equal(crossings.indexOf(true), crossings.length - 1);
    assert.deepEqual(budget.admit("/a"), { spent: true });
  });

  it("is spent by one path over its own bound, and not by a syntax error", () => {
    const budget = new PathPatternBudget();
    assert.equal(budget.check("/(a").ok, false);
    assert.equal(budget.spent, false);
    assert.equal(budget.check(`/${"[a-z]{1000}".repeat(6)}`).ok, false);
    assert.equal(budget.spent, true);
  });

  it("checks a path as nginx's case-insensitive, start-anchored location", () => {
    const check = new PathPatternBudget().check("/API/v[0-9]+");
    assert.ok(check.ok);
    assert.equal(check.pattern.test("/api/v2/users"), true);
    assert.equal(check.pattern.test("/x/api/v2"), false);
  });
});
