import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  annotation,
  bad,
  good,
  parseBool,
  parseIntFrom,
  parseIntIn,
  parseList,
  parseSeconds,
  parseSize,
  quote,
  textProblem,
  type Parsed,
} from "./validators";

const BOOL = `"true" or "false"`;

describe("parseBool (strconv.ParseBool)", () => {
  const cases: [string, Parsed<boolean>][] = [
    ["true", good(true)],
    ["false", good(false)],
    ["True", good(true)],
    ["1", good(true)],
    ["F", good(false)],
    ["yes", bad(BOOL, "yes")],
    [" true", bad(BOOL, " true")],
    ["", bad(BOOL, "")],
  ];
  for (const [raw, expected] of cases) {
    it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseBool(raw), expected);
    });
  }
});

describe("parseIntIn 0..100", () => {
  const wrong = (raw: string) => bad("an integer between 0 and 100", raw);
  const cases: [string, Parsed<number>][] = [
    ["0", good(0)],
    ["100", good(100)],
    ["007", good(7)],
    ["-0", good(0)],
    ["101", wrong("101")],
    ["-1", wrong("-1")],
    ["abc", wrong("abc")],
    ["1.5", wrong("1.5")],
    ["+5", good(5)],
    [" 5", wrong(" 5")],
    ["1e2", wrong("1e2")],
    ["", wrong("")],
  ];
  for (const [raw, expected] of cases) {
    it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseIntIn(raw, 0, 100), expected);
    });
  }
  it("given a number beyond 2^53, returns an error", () => {
    assert.equal(parseIntIn("99999999999999999999", 0, Number.MAX_SAFE_INTEGER).ok, false);
  });
});

describe("parseIntFrom 0", () => {
  const cases: [string, Parsed<number>][] = [
    ["0", good(0)],
    ["9007199254740991", good(Number.MAX_SAFE_INTEGER)],
    ["9007199254740992", bad("an integer of 0 or more", "9007199254740992")],
    ["-1", bad("an integer of 0 or more", "-1")],
  ];
  for (const [raw, expected] of cases) {
    it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseIntFrom(raw, 0), expected);
    });
  }
});

describe("parseSeconds", () => {
  const cases: [string, Parsed<number>][] = [
    ["60", good(60)],
    ["1", good(1)],
    ["0", bad("an integer number of seconds between 1 and 2147483", "0")],
    ["60s", bad("an integer number of seconds between 1 and 2147483", "60s", "no unit")],
    ["1m", bad("an integer number of seconds between 1 and 2147483", "1m")],
    ["2147484", bad("an integer number of seconds between 1 and 2147483", "2147484")],
  ];
  for (const [raw, expected] of cases) {
    it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseSeconds(raw), expected);
    });
  }
});

describe("parseSize", () => {
  const cases: [string, number | "unlimited" | undefined][] = [
    ["0", "unlimited"],
    ["0m", "unlimited"],
    ["1024", 1024],
    ["1k", 1024],
    ["8m", 8 * 1024 * 1024],
    ["8M", 8 * 1024 * 1024],
    ["2g", 2 * 1024 ** 3],
    ["8mb", undefined],
    ["8 m", undefined],
    ["10b", undefined],
    ["1.5m", undefined],
    ["-1", undefined],
    ["", undefined],
    ["99999999999g", undefined],
  ];
  for (const [raw, bytes] of cases) {
    it(`given ${quote(raw)}, returns ${bytes ?? "an error"}`, () => {
      const parsed = parseSize(raw);
      assert.deepEqual(parsed.ok ? parsed.value : undefined, bytes);
      if (!parsed.ok) assert.match(parsed.message, /^expected a size in bytes .*, got "/);
    });
  }
});

describe("parseList", () => {
  const rule = {
    expected: `values separated by "||"`,
    separator: "||",
    max: 3,
    entryProblem: textProblem,
  };
  const cases: [string, string[] | string][] = [
    ["a", ["a"]],
    ["a||b||c", ["a", "b", "c"]],
    ["a|b", ["a|b"]],
    ["a||b||c||d", "(4 entries)"],
    ["a||||b", "(entry 2 is empty)"],
    ["a||", "(entry 2 is empty)"],
    ["a|| b", `(entry 2 " b" has leading or trailing spaces)`],
    ["a||b\u0007", `(entry 2 "b\\u0007" has a control character)`],
  ];
  for (const [raw, expected] of cases) {
    it(`given ${quote(raw)}, returns ${JSON.stringify(expected)}`, () => {
      const parsed = parseList(raw, rule);
      if (Array.isArray(expected)) return assert.deepEqual(parsed, good(expected));
      assert.equal(parsed.ok, false);
      if (!parsed.ok) {
        assert.ok(parsed.message.startsWith(`expected values separated by "||" (at most 3), got `));
        assert.ok(parsed.message.endsWith(expected), parsed.message);
      }
    });
  }
  it("given trim, returns the entries without surrounding spaces", () => {
    assert.deepEqual(
      parseList(" a , b ", { ...rule, separator: ",", trim: true }),
      good(["a", "b"]),
    );
  });
});

describe("quote", () => {
  it("given a long value, returns it cut at 100 characters", () => {
    assert.equal(quote("x".repeat(500)), JSON.stringify(`${"x".repeat(100)}…`));
  });
});

describe("annotation", () => {
  const schema = annotation(parseBool);
  it("given a good value, returns the parsed value", () => {
    assert.deepEqual(schema.safeParse("true"), { success: true, data: true });
  });
  it("given a bad value, returns one issue with the parser's message", () => {
    const parsed = schema.safeParse("yes");
    assert.deepEqual(
      parsed.error?.issues.map(i => i.message),
      [`expected "true" or "false", got "yes"`],
    );
  });
  it("given a non-string, returns an issue naming the type", () => {
    assert.deepEqual(
      schema.safeParse(1).error?.issues.map(i => i.message),
      ["expected a string, got number"],
    );
  });
});
