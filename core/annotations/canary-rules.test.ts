import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCanary } from "./canary";
import { canaryFields, canaryKey, type CanaryField } from "./canary-fields";
import { annotationPath } from "./family";

type Given = Partial<Record<CanaryField, string>>;

function annotations(given: Given): Record<string, string> {
  return Object.fromEntries(
    Object.entries(given).map(([f, v]) => [canaryKey(f as CanaryField), v]),
  );
}

const ON: Given = { enabled: "true" };
const MOD: Given = { modDivisor: "10", modOperator: ">=", modRemainder: "5" };
const NOT_ENABLED = `needs ${canaryKey("enabled")}: "true" (configured but not enabled)`;

describe("canary rules between fields", () => {
  const cases: [string, Given, [CanaryField, string][]][] = [
    ["canary-weight without canary", { weight: "10" }, [["weight", NOT_ENABLED]]],
    [
      "canary-by-header and -value with canary false",
      { enabled: "false", header: "X-C", headerValue: "a" },
      [
        ["header", NOT_ENABLED],
        ["headerValue", NOT_ENABLED],
      ],
    ],
    ["canary-by-query without canary", { query: "q" }, [["query", NOT_ENABLED]]],
    [
      "canary-request-add-header without canary",
      { requestAddHeader: "A:1" },
      [["requestAddHeader", NOT_ENABLED]],
    ],
    [
      "a mod rule without canary",
      { ...MOD, header: "X-C" },
      [
        ["header", NOT_ENABLED],
        ["modDivisor", NOT_ENABLED],
        ["modOperator", NOT_ENABLED],
        ["modRemainder", NOT_ENABLED],
      ],
    ],
    [
      "canary-by-header-value without -by-header",
      { ...ON, headerValue: "a" },
      [["headerValue", `needs ${canaryKey("header")}`]],
    ],
    [
      "canary-by-header-pattern without -by-header",
      { ...ON, headerPattern: "^a" },
      [["headerPattern", `needs ${canaryKey("header")}`]],
    ],
    [
      "canary-by-cookie-value without -by-cookie",
      { ...ON, cookieValue: "a" },
      [["cookieValue", `needs ${canaryKey("cookie")}`]],
    ],
    [
      "canary-by-query-value without -by-query",
      { ...ON, queryValue: "a" },
      [["queryValue", `needs ${canaryKey("query")}`]],
    ],
    [
      "a mod divisor alone",
      { ...ON, cookie: "uid", modDivisor: "10" },
      [
        [
          "modDivisor",
          `needs ${canaryKey("modOperator")} and ${canaryKey("modRemainder")} too: a mod rule takes all three`,
        ],
      ],
    ],
    [
      "a mod rule without a source",
      { ...ON, ...MOD },
      [
        [
          "modDivisor",
          `needs one of ${canaryKey("header")}, ${canaryKey("cookie")}, ${canaryKey("query")}: its value is divided`,
        ],
      ],
    ],
    [
      "a remainder equal to the divisor",
      { ...ON, ...MOD, cookie: "uid", modRemainder: "10" },
      [
        [
          "modRemainder",
          `expected an integer between 0 and 9 (below ${canaryKey("modDivisor")}), got "10"`,
        ],
      ],
    ],
  ];
  for (const [title, given, expected] of cases) {
    it(`given ${title}, returns errors naming ${expected.map(([f]) => canaryFields[f].annotation).join(", ")}`, () => {
      const result = parseCanary(annotations(given));
      assert.equal(result.ok, false);
      if (result.ok) return;
      const want = expected.map(([field, message]) => ({
        field: annotationPath(canaryKey(field)),
        message,
      }));
      assert.deepEqual(result.errors, want);
    });
  }
});

describe("canary warnings", () => {
  const cases: [string, Given, string[]][] = [
    ["a header canary", { ...ON, header: "X-C" }, []],
    ["canary-weight-total on a main ingress", { weightTotal: "1000" }, []],
    [
      "both -value and -pattern",
      { ...ON, header: "X-C", headerValue: "a", headerPattern: "^b" },
      [`${canaryKey("headerPattern")} is ignored because ${canaryKey("headerValue")} is set`],
    ],
    [
      "a mod rule on a source with a value list",
      { ...ON, ...MOD, cookie: "uid", cookieValue: "1||2" },
      [
        `${canaryKey("modDivisor")} and the other canary-mod-* are ignored: ` +
          "every canary-by-* source here matches by value list or pattern, which take precedence",
      ],
    ],
    [
      "a weight above 100 without a total here",
      { ...ON, weight: "500" },
      [
        `${canaryKey("weight")} is 500, above the default total of 100: ` +
          `set ${canaryKey("weightTotal")} here or on the main ingress`,
      ],
    ],
    ["a weight above 100 with a total here", { ...ON, weight: "500", weightTotal: "1000" }, []],
    [
      "a weight above its total (ingress-nginx: every request to the canary)",
      { ...ON, weight: "150", weightTotal: "120" },
      [
        `${canaryKey("weight")} is 150, above ${canaryKey("weightTotal")} 120: every request that no rule decides goes to the canary`,
      ],
    ],
    [
      "a total below 100 (ingress-nginx reads it as 100)",
      { ...ON, weight: "30", weightTotal: "50" },
      [`${canaryKey("weightTotal")} is 50: a total below 100 reads as 100, as in ingress-nginx`],
    ],
    [
      "canary alone",
      ON,
      [
        `${canaryKey("enabled")} is "true" but no canary-by-* or ${canaryKey("weight")} is set: ` +
          "the canary receives no traffic",
      ],
    ],
  ];
  for (const [title, given, expected] of cases) {
    it(`given ${title}, returns ${expected.length} warning(s)`, () => {
      const result = parseCanary(annotations(given));
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.deepEqual(result.warnings, expected);
    });
  }
});
