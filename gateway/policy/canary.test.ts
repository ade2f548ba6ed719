import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCanary } from "../../core/annotations/canary";
import {
  canaryGroup,
  compileCanary,
  decideCanary,
  effectiveTotal,
  MAX_PATTERN_VALUE,
  type RequestValues,
} from "./canary";

const P = "nginx.ingress.kubernetes.io/";

function canary(id: string, annotations: Record<string, string>, compare?: "case-insensitive") {
  const withPrefix = Object.fromEntries(
    Object.entries({ canary: "true", ...annotations }).map(([k, v]) => [P + k, v]),
  );
  const parsed = parseCanary(withPrefix);
  if (!parsed.ok || parsed.value === undefined) throw new Error(JSON.stringify(parsed));
  return compileCanary(id, parsed.value, compare);
}

function request(
  values: { header?: Record<string, string>; cookie?: Record<string, string> } & {
    query?: Record<string, string>;
  } = {},
): RequestValues {
  const lower = Object.fromEntries(
    Object.entries(values.header ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
  );
  return {
    header: name => lower[name],
    cookie: name => values.cookie?.[name],
    query: name => values.query?.[name],
  };
}

function decide(
  canaries: ReturnType<typeof canary>[],
  req: RequestValues,
  options: { random?: number; unavailable?: string[]; mainTotal?: number } = {},
): string {
  const decision = decideCanary(
    canaryGroup(canaries, options.mainTotal),
    {
      available: id => !(options.unavailable ?? []).includes(id),
      random: () => options.random ?? 0.999,
    },
    req,
  );
  return decision.target === "canary" ? decision.id : "main";
}

describe("decideCanary: the request's pattern budget", () => {
  it("skips a pattern the request can no longer afford (no match: main), and still runs cheaper ones", () => {
    // 1 008 instructions × 401 characters: 404 208 of the 500 000 steps, and no match; the second
    // (399 × 401) would match but no longer fits; the last (a few hundred steps) does.
    const header = (id: string, pattern: string) =>
      canary(id, { "canary-by-header": "X-User", "canary-by-header-pattern": pattern });
    const canaries = [
      header("costly", "(a|b)*a[ab]{1000}c"),
      header("unaffordable", "[ab]{399}"),
      header("cheap", "^ab"),
    ];
    const value = "ab".repeat(200);
    assert.equal(decide(canaries, request({ header: { "X-User": value } })), "cheap");
    // Alone, the second is affordable and matches.
    assert.equal(
      decide(canaries.slice(1), request({ header: { "X-User": value } })),
      "unaffordable",
    );
  });
});

describe("decideCanary: ingress-nginx semantics", () => {
  const byHeader = canary("c", { "canary-by-header": "X-Canary" });
  const cases: [string, ReturnType<typeof canary>[], RequestValues, string][] = [
    ["header always", [byHeader], request({ header: { "X-Canary": "always" } }), "c"],
    ["header never", [byHeader], request({ header: { "X-Canary": "never" } }), "main"],
    [
      "header other value falls through",
      [byHeader],
      request({ header: { "x-canary": "yes" } }),
      "main",
    ],
    ["header absent", [byHeader], request(), "main"],
    [
      "header values compare exactly",
      [byHeader],
      request({ header: { "X-Canary": "Always" } }),
      "main",
    ],
    [
      "header-value match",
      [canary("c", { "canary-by-header": "X-Region", "canary-by-header-value": "eu" })],
      request({ header: { "X-Region": "eu" } }),
      "c",
    ],
    [
      "with header-value, always is not special",
      [canary("c", { "canary-by-header": "X-Region", "canary-by-header-value": "eu" })],
      request({ header: { "X-Region": "always" } }),
      "main",
    ],
    [
      "header-pattern match",
      [canary("c", { "canary-by-header": "X-User", "canary-by-header-pattern": "^beta-[0-9]+$" })],
      request({ header: { "X-User": "beta-42" } }),
      "c",
    ],
    [
      "header-pattern no match",
      [canary("c", { "canary-by-header": "X-User", "canary-by-header-pattern": "^beta-[0-9]+$" })],
      request({ header: { "X-User": "alpha-42" } }),
      "main",
    ],
    [
      "header-pattern on a value of MAX_PATTERN_VALUE characters",
      [canary("c", { "canary-by-header": "X-User", "canary-by-header-pattern": "^b+$" })],
      request({ header: { "X-User": "b".repeat(MAX_PATTERN_VALUE) } }),
      "c",
    ],
    [
      // ingress-nginx refuses a header line this long (400); here it is not run on the pattern.
      "header-pattern on a longer value does not match",
      [canary("c", { "canary-by-header": "X-User", "canary-by-header-pattern": "^b+$" })],
      request({ header: { "X-User": "b".repeat(MAX_PATTERN_VALUE + 1) } }),
      "main",
    ],
    [
      "pattern ignored when a value is set",
      [
        canary("c", {
          "canary-by-header": "X-User",
          "canary-by-header-value": "x",
          "canary-by-header-pattern": ".*",
        }),
      ],
      request({ header: { "X-User": "y" } }),
      "main",
    ],
    [
      "cookie always",
      [canary("c", { "canary-by-cookie": "beta" })],
      request({ cookie: { beta: "always" } }),
      "c",
    ],
    [
      "cookie never",
      [canary("c", { "canary-by-cookie": "beta", "canary-weight": "100" })],
      request({ cookie: { beta: "never" } }),
      "main",
    ],
    [
      "header beats cookie",
      [canary("c", { "canary-by-header": "X-Canary", "canary-by-cookie": "beta" })],
      request({ header: { "X-Canary": "never" }, cookie: { beta: "always" } }),
      "main",
    ],
    [
      "header never beats weight 100",
      [canary("c", { "canary-by-header": "X-Canary", "canary-weight": "100" })],
      request({ header: { "X-Canary": "never" } }),
      "main",
    ],
    [
      // balancer.lua: with canary-by-header-value set, "always" is just another value.
      "header value list makes always ordinary",
      [canary("c", { "canary-by-header": "X-Canary", "canary-by-header-value": "yes" })],
      request({ header: { "X-Canary": "always" } }),
      "main",
    ],
    [
      // balancer.lua: a pattern that does not match falls through to the cookie.
      "header pattern miss falls through to the cookie",
      [
        canary("c", {
          "canary-by-header": "X-Canary",
          "canary-by-header-pattern": "^beta",
          "canary-by-cookie": "c",
        }),
      ],
      request({ header: { "X-Canary": "alpha" }, cookie: { c: "always" } }),
      "c",
    ],
    [
      // ngx.var["http_x_canary"] matches the header X-Canary.
      "a header name with _ matches the header with -",
      [canary("c", { "canary-by-header": "X_Canary" })],
      request({ header: { "X-Canary": "always" } }),
      "c",
    ],
    [
      "header fall-through reaches weight",
      [canary("c", { "canary-by-header": "X-Canary", "canary-weight": "100" })],
      request({ header: { "X-Canary": "maybe" } }),
      "c",
    ],
  ];
  for (const [name, canaries, req, expected] of cases) {
    it(name, () => assert.equal(decide(canaries, req), expected));
  }
});

describe("decideCanary: weights", () => {
  const w30 = canary("c", { "canary-weight": "30" });
  it("draws below the weight go to the canary, the rest to main", () => {
    assert.equal(decide([w30], request(), { random: 0 }), "c");
    assert.equal(decide([w30], request(), { random: 0.299 }), "c");
    assert.equal(decide([w30], request(), { random: 0.3 }), "main");
  });
  it("canary-weight-total on the canary (ingress-nginx) scales the draw", () => {
    const c = canary("c", { "canary-weight": "30", "canary-weight-total": "1000" });
    assert.equal(decide([c], request(), { random: 0.029 }), "c");
    assert.equal(decide([c], request(), { random: 0.031 }), "main");
  });
  it("the main ingress's total applies to a canary without one (Tengine)", () => {
    assert.equal(decide([w30], request(), { random: 0.149, mainTotal: 200 }), "c");
    assert.equal(decide([w30], request(), { random: 0.16, mainTotal: 200 }), "main");
  });
  it("the canary's own total beats the main's (ingress-nginx reads only the canary's)", () => {
    const c = canary("c", { "canary-weight": "30", "canary-weight-total": "1000" });
    assert.equal(decide([c], request(), { random: 0.031, mainTotal: 200 }), "main");
  });
  // balancer.lua: `local weightTotal = 100; if weightTotal > 100 then use it` and
  // `math.random(weightTotal) <= weight`.
  it("a total of 100 or below reads as 100 (balancer.lua)", () => {
    assert.equal(effectiveTotal(50, undefined), 100);
    assert.equal(effectiveTotal(0, 500), 100);
    assert.equal(effectiveTotal(undefined, 100), 100);
    assert.equal(effectiveTotal(101, undefined), 101);
    const c = canary("c", { "canary-weight": "30", "canary-weight-total": "50" });
    assert.equal(decide([c], request(), { random: 0.299 }), "c");
    assert.equal(decide([c], request(), { random: 0.3 }), "main");
  });
  it("a weight above the total sends everything to the canary (math.random(total) <= weight)", () => {
    const c = canary("c", { "canary-weight": "150" });
    assert.equal(decide([c], request(), { random: 0.9999 }), "c");
  });
  it("weight 0 and weight total: never and always", () => {
    assert.equal(decide([canary("c", { "canary-weight": "0" })], request(), { random: 0 }), "main");
    const all = canary("c", { "canary-weight": "100" });
    assert.equal(decide([all], request(), { random: 0.9999 }), "c");
  });
  it("several weight canaries share the total in creation order (Tengine)", () => {
    const a = canary("a", { "canary-weight": "20" });
    const b = canary("b", { "canary-weight": "30" });
    assert.equal(decide([a, b], request(), { random: 0.19 }), "a");
    assert.equal(decide([a, b], request(), { random: 0.2 }), "b");
    assert.equal(decide([a, b], request(), { random: 0.49 }), "b");
    assert.equal(decide([a, b], request(), { random: 0.5 }), "main");
  });
});

describe("decideCanary: Tengine-Ingress extensions", () => {
  const header = canary("h", {
    "canary-by-header": "X-Env",
    "canary-by-header-value": "gray||pre",
  });
  const cookie = canary("k", { "canary-by-cookie": "uid", "canary-by-cookie-value": "7||8" });
  const query = canary("q", { "canary-by-query": "city", "canary-by-query-value": "hz" });
  const weight = canary("w", { "canary-weight": "50" });
  const all = [weight, query, cookie, header];
  const cases: [string, RequestValues, string][] = [
    ["value list, second value", request({ header: { "X-Env": "pre" } }), "h"],
    ["cookie list", request({ cookie: { uid: "8" } }), "k"],
    ["query value", request({ query: { city: "hz" } }), "q"],
    [
      "header before cookie whatever the creation order",
      request({ header: { "X-Env": "gray" }, cookie: { uid: "7" } }),
      "h",
    ],
    ["cookie before query", request({ cookie: { uid: "7" }, query: { city: "hz" } }), "k"],
    ["rules before weight", request({ query: { city: "hz" } }), "q"],
    ["no rule: weight draw", request({ query: { city: "sh" } }), "w"],
  ];
  for (const [name, req, expected] of cases) {
    it(name, () => assert.equal(decide(all, req, { random: 0.1 }), expected));
  }
  it("first matching canary of a class in creation order", () => {
    const first = canary("first", {
      "canary-by-header": "X-Env",
      "canary-by-header-value": "gray",
    });
    assert.equal(decide([first, header], request({ header: { "X-Env": "gray" } })), "first");
    assert.equal(decide([header, first], request({ header: { "X-Env": "gray" } })), "h");
  });
  it("value lists compare case-insensitively when configured as Tengine does", () => {
    const tengine = canary(
      "t",
      { "canary-by-header": "X-Env", "canary-by-header-value": "Gray" },
      "case-insensitive",
    );
    assert.equal(decide([tengine], request({ header: { "X-Env": "GRAY" } })), "t");
    assert.equal(decide([header], request({ header: { "X-Env": "GRAY" } })), "main");
  });
  it("modulo rules: atoi(value) % divisor OP remainder; a non-number never matches", () => {
    const mod = (op: string, remainder: string) =>
      canary("m", {
        "canary-by-header": "X-Uid",
        "canary-mod-divisor": "10",
        "canary-mod-relational-operator": op,
        "canary-mod-remainder": remainder,
      });
    const uid = (v: string) => request({ header: { "X-Uid": v } });
    assert.equal(decide([mod("==", "3")], uid("1233")), "m");
    assert.equal(decide([mod("==", "3")], uid("1234")), "main");
    assert.equal(decide([mod("<", "5")], uid("14")), "m");
    assert.equal(decide([mod("<", "5")], uid("15")), "main");
    assert.equal(decide([mod(">=", "5")], uid("15")), "m");
    assert.equal(decide([mod(">", "5")], uid("15")), "main");
    assert.equal(decide([mod("<=", "5")], uid("15")), "m");
    assert.equal(decide([mod("==", "3")], uid("3a")), "main");
    assert.equal(decide([mod("==", "3")], uid("123456789012345678901234567893")), "m");
  });
  it("a matched canary without a ready endpoint falls back to main", () => {
    const req = request({ header: { "X-Env": "gray" } });
    assert.equal(decide([header], req, { unavailable: ["h"] }), "main");
    assert.equal(decide([weight], request(), { random: 0, unavailable: ["w"] }), "main");
  });
  it("a canary decision carries the dyeing actions and the reason", () => {
    const dyed = canary("d", {
      "canary-by-query": "v",
      "canary-request-add-header": "X-Dyed:1",
      "canary-response-add-header": "X-From:canary",
      "canary-request-add-query": "dyed=yes",
    });
    const decision = decideCanary(
      canaryGroup([dyed], undefined),
      { available: () => true, random: () => 0 },
      request({ query: { v: "always" } }),
    );
    assert.equal(decision.target, "canary");
    assert.ok(decision.target === "canary");
    assert.deepEqual(decision.actions.requestAddHeaders, [{ name: "X-Dyed", value: "1" }]);
    assert.deepEqual(decision.actions.responseAddHeaders, [{ name: "X-From", value: "canary" }]);
    assert.deepEqual(decision.actions.requestAddQuery, [{ name: "dyed", value: "yes" }]);
    assert.equal(decision.reason, "query v=always");
  });
});
