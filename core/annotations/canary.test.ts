import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCanary, type CanaryConfig } from "./canary";
import { canaryKey, type CanaryField } from "./canary-fields";

function annotations(given: Partial<Record<CanaryField, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(given).map(([f, v]) => [canaryKey(f as CanaryField), v]),
  );
}

const NO_ACTIONS: CanaryConfig["actions"] = {
  requestAddHeaders: [],
  requestAppendHeaders: [],
  requestAddQuery: [],
  responseAddHeaders: [],
  responseAppendHeaders: [],
};
const BASE: CanaryConfig = {
  enabled: true,
  weight: undefined,
  weightTotal: undefined,
  header: undefined,
  cookie: undefined,
  query: undefined,
  actions: NO_ACTIONS,
};

describe("parseCanary", () => {
  const cases: [string, Record<string, string> | undefined, CanaryConfig | undefined][] = [
    ["no annotations", undefined, undefined],
    [
      "only other annotations",
      { [`x.io/${canaryKey("enabled")}`]: "true", canary: "true" },
      undefined,
    ],
    ["canary false alone", annotations({ enabled: "false" }), { ...BASE, enabled: false }],
    [
      "a Tengine main ingress carrying the weight total",
      annotations({ weightTotal: "1000" }),
      { ...BASE, enabled: false, weightTotal: 1000 },
    ],
    [
      "ingress-nginx header, cookie and weight",
      annotations({ enabled: "true", header: "X-Canary", cookie: "canary", weight: "20" }),
      {
        ...BASE,
        weight: 20,
        header: { name: "X-Canary", match: { kind: "always" } },
        cookie: { name: "canary", match: { kind: "always" } },
      },
    ],
    [
      "a header value and a pattern",
      annotations({ enabled: "true", header: "X-V", headerValue: "v2", headerPattern: "^v" }),
      { ...BASE, header: { name: "X-V", match: { kind: "values", values: ["v2"] } } },
    ],
    [
      "a header pattern",
      annotations({ enabled: "true", header: "X-V", headerPattern: "^v[0-9]+$" }),
      { ...BASE, header: { name: "X-V", match: { kind: "pattern", pattern: "^v[0-9]+$" } } },
    ],
    [
      "Tengine query values and a cookie mod rule",
      annotations({
        enabled: "true",
        query: "env",
        queryValue: "gray||beta",
        cookie: "uid",
        modDivisor: "100",
        modOperator: "<",
        modRemainder: "10",
      }),
      {
        ...BASE,
        cookie: { name: "uid", match: { kind: "mod", divisor: 100, operator: "<", remainder: 10 } },
        query: { name: "env", match: { kind: "values", values: ["gray", "beta"] } },
      },
    ],
    [
      "Tengine actions",
      annotations({
        enabled: "true",
        weight: "0",
        requestAddHeader: "X-Gray:1||X-Var:$host",
        requestAppendHeader: "X-Tags:canary",
        requestAddQuery: "gray=1&from=canary",
        responseAddHeader: "X-Served-By:canary",
        responseAppendHeader: "Vary:X-Gray",
      }),
      {
        ...BASE,
        weight: 0,
        actions: {
          requestAddHeaders: [
            { name: "X-Gray", value: "1" },
            { name: "X-Var", value: "$host" },
          ],
          requestAppendHeaders: [{ name: "X-Tags", value: "canary" }],
          requestAddQuery: [
            { name: "gray", value: "1" },
            { name: "from", value: "canary" },
          ],
          responseAddHeaders: [{ name: "X-Served-By", value: "canary" }],
          responseAppendHeaders: [{ name: "Vary", value: "X-Gray" }],
        },
      },
    ],
  ];
  for (const [title, given, expected] of cases) {
    it(`given ${title}, returns ${expected === undefined ? "undefined" : "its config"}`, () => {
      const result = parseCanary(given);
      assert.equal(result.ok, true, JSON.stringify(result));
      if (result.ok) assert.deepEqual(result.value, expected);
    });
  }

  it("given several malformed values, returns every error at once", () => {
    const result = parseCanary(
      annotations({ enabled: "true", weight: "x", cookie: "a b", modOperator: "!" }),
    );
    assert.equal(result.ok, false);
    if (!result.ok) assert.equal(result.errors.length, 3);
  });
});
