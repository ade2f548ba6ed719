import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  parseHeaderActions,
  parseModOperator,
  parsePattern,
  parseQueryActions,
  parseQueryName,
  parseTokenName,
  valueList,
} from "./canary-values";
import { quote, type Parsed } from "./validators";

/** Cases: raw value, then the parsed value or the end of the error message. */
function table<T>(name: string, parse: (raw: string) => Parsed<T>, cases: [string, T | string][]) {
  describe(name, () => {
    for (const [raw, expected] of cases) {
      it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
        const parsed = parse(raw);
        if (parsed.ok) return assert.deepEqual(parsed.value, expected);
        assert.equal(typeof expected, "string", parsed.message);
        assert.ok(parsed.message.endsWith(String(expected)), parsed.message);
      });
    }
  });
}

table("parseTokenName", parseTokenName, [
  ["X-Canary", "X-Canary"],
  ["x_canary.v2", "x_canary.v2"],
  ["X Canary", `expected a name of letters, digits and !#$%&'*+-.^_\`|~, got "X Canary"`],
  ["X:Canary", `expected a name of letters, digits and !#$%&'*+-.^_\`|~, got "X:Canary"`],
  ["", `expected a name of letters, digits and !#$%&'*+-.^_\`|~, got ""`],
]);

table("parseQueryName", parseQueryName, [
  ["uid", "uid"],
  ["a=b", `expected a query parameter name without spaces, "&", "=" or "#", got "a=b"`],
  ["a b", `expected a query parameter name without spaces, "&", "=" or "#", got "a b"`],
  ["", `expected a query parameter name without spaces, "&", "=" or "#", got ""`],
]);

table("valueList header", valueList("header"), [
  ["always", ["always"]],
  ["v1||v2", ["v1", "v2"]],
  ["a b||c", ["a b", "c"]],
  [
    Array.from({ length: 20 }, (_, i) => `v${i}`).join("||"),
    Array.from({ length: 20 }, (_, i) => `v${i}`),
  ],
  [Array.from({ length: 21 }, (_, i) => `v${i}`).join("||"), "(21 entries)"],
  ["v1||||v2", "(entry 2 is empty)"],
  ["v1|| v2", `(entry 2 " v2" has leading or trailing spaces)`],
]);

table("valueList cookie", valueList("cookie"), [
  ["beta||gamma", ["beta", "gamma"]],
  ["a;b", `(entry 1 "a;b" has a space or one of ",;\\)`],
]);

table("valueList query", valueList("query"), [
  ["1||2", ["1", "2"]],
  ["a&b", `(entry 1 "a&b" has a space, "&" or "#")`],
]);

table("parsePattern", parsePattern, [
  ["^v[0-9]+$", "^v[0-9]+$"],
  ["(", "(error parsing regexp: missing closing ): `(`)"],
  ["", `expected a regular expression in RE2 syntax (no backreferences or lookaround), got ""`],
  // V8 would run these by backtracking; the linear-time engine refuses them, naming the construct.
  ["(a)\\1", "(error parsing regexp: invalid escape sequence: `\\1`)"],
  ["a(?=b)", "(error parsing regexp: invalid or unsupported Perl syntax: `(?=`)"],
  // Valid RE2, but each request would run 6 002 instructions and every worker keep them.
  [
    "[a-z]{1000}".repeat(6),
    "(compiles to 6002 RE2 instructions, more than the 5000 a pattern may have (each request runs them; spell out fewer repetitions))",
  ],
]);

table("parseModOperator", parseModOperator, [
  ["==", "=="],
  [">=", ">="],
  ["<", "<"],
  ["=", `expected one of "==", ">", ">=", "<", "<=", got "="`],
  ["!=", `expected one of "==", ">", ">=", "<", "<=", got "!="`],
]);

table("parseHeaderActions", parseHeaderActions, [
  ["X-Canary:yes", [{ name: "X-Canary", value: "yes" }]],
  [
    "X-A: 1||X-B:2:30",
    [
      { name: "X-A", value: "1" },
      { name: "X-B", value: "2:30" },
    ],
  ],
  ["X-Var:$host", [{ name: "X-Var", value: "$host" }]],
  ["X-A:1||X-B:2||X-C:3", "(3 entries)"],
  ["X-A", `(entry 1 "X-A" has no ":" between name and value)`],
  ["X A:1", `(entry 1 "X A:1" has an invalid header name "X A")`],
  ["X-A:", `(entry 1 "X-A:" has a value that is empty)`],
  ["X-A:1||", "(entry 2 is empty)"],
]);

table("parseQueryActions", parseQueryActions, [
  ["a=b", [{ name: "a", value: "b" }]],
  [
    "a=b&c=d",
    [
      { name: "a", value: "b" },
      { name: "c", value: "d" },
    ],
  ],
  ["a=b&c=d&e=f", "(3 entries)"],
  ["a", `(entry 1 "a" has no "=" between name and value)`],
  ["=b", `(entry 1 "=b" has an invalid parameter name "")`],
  ["a=", `(entry 1 "a=" has a value that is empty)`],
  ["a=b c", `(entry 1 "a=b c" has a value that has a space, "&" or "#")`],
]);
