import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileLinear, linearPatternProblem } from "./linear-regex";

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
