import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hostProblem, nameCoversHost } from "./hostname";

describe("hostProblem", () => {
  const cases: [string, RegExp | undefined][] = [
    ["example.com", undefined],
    ["a-b.example.com", undefined],
    ["*.example.com", undefined],
    ["xn--bcher-kva.example", undefined],
    ["", /empty/],
    ["Example.com", /lowercase/],
    ["a..b", /label ''/],
    ["-a.com", /label '-a'/],
    ["a_b.com", /label 'a_b'/],
    ["*", /domain after/],
    ["a.*.com", /only as the first label/],
    ["*a.example.com", /whole label/],
    ["10.0.0.1", /not an IP/],
    ["[::1]", /not an IP/],
    ["a".repeat(64) + ".com", /longer than 63/],
    [("a".repeat(60) + ".").repeat(5) + "com", /at most 253/],
  ];
  for (const [host, expected] of cases) {
    it(`given ${JSON.stringify(host.length > 40 ? host.slice(0, 20) + "…" : host)}, returns ${expected ?? "no problem"}`, () => {
      const problem = hostProblem(host);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? "", expected);
    });
  }
});

describe("nameCoversHost", () => {
  const cases: [string, string, boolean][] = [
    ["example.com", "example.com", true],
    ["EXAMPLE.com", "example.com", true],
    ["*.example.com", "a.example.com", true],
    ["*.example.com", "example.com", false],
    ["*.example.com", "a.b.example.com", false],
    ["*.example.com", "*.example.com", true],
    ["a.example.com", "*.example.com", false],
    ["other.com", "example.com", false],
  ];
  for (const [name, host, expected] of cases) {
    it(`given certificate name ${name} and host ${host}, returns ${expected}`, () => {
      assert.equal(nameCoversHost(name, host), expected);
    });
  }
});
