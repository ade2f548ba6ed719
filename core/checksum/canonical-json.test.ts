import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { canonicalJson, canonicalJsonByWriter } from "./canonical-json";

class WithToJson {
  a = 1;
  toJSON(): string {
    return "not used";
  }
}

class Sublist<T> extends Array<T> {}

class Spec {
  rules = [{ host: "a.example" }];
  defaultBackend: unknown = undefined;
}

describe("canonicalJson", () => {
  const cases: [string, unknown, string][] = [
    ["null", null, "null"],
    ["booleans", [true, false], "[true,false]"],
    ["integers and fractions", [0, -1, 80, 1.5, 1e21, 5e-7], "[0,-1,80,1.5,1e+21,5e-7]"],
    ["minus zero", -0, "0"],
    ["a string with quotes, controls and non-ASCII", 'a"\\\n\u0001é', '"a\\"\\\\\\n\\u0001é"'],
    ["a lone surrogate", "\uD800", '"\\ud800"'],
    [
      "unsorted keys",
      { b: 1, a: 2, c: { z: 0, y: [3, { k: 1, j: 2 }] } },
      '{"a":2,"b":1,"c":{"y":[3,{"j":2,"k":1}],"z":0}}',
    ],
    [
      "keys whose UTF-16 and UTF-8 order differ",
      { "\u{1F600}": 1, "\uE000": 2 },
      '{"\uE000":2,"\u{1F600}":1}',
    ],
    ["undefined members", { a: undefined, b: 1 }, '{"b":1}'],
    ["empty containers", { a: {}, b: [] }, '{"a":{},"b":[]}'],
    ["a class instance", new Spec(), '{"rules":[{"host":"a.example"}]}'],
    [
      "an object without a prototype",
      Object.assign(Object.create(null) as object, { a: 1 }),
      '{"a":1}',
    ],
    ["the same object twice, not a cycle", ((o: object) => [o, o])({ a: 1 }), '[{"a":1},{"a":1}]'],
    [
      "a sorted object with one unsorted member",
      { a: 1, b: { d: 1, c: 2 }, e: undefined, f: 3 },
      '{"a":1,"b":{"c":2,"d":1},"f":3}',
    ],
    [
      "an undefined member before a changed one",
      { a: undefined, b: { d: 1, c: 2 } },
      '{"b":{"c":2,"d":1}}',
    ],
    [
      "an array whose middle element changes",
      [{ a: 1 }, { c: 1, b: 2 }, { d: 1 }],
      '[{"a":1},{"b":2,"c":1},{"d":1}]',
    ],
    ["a class instance with toJSON", new WithToJson(), '{"a":1}'],
    ["an Array subclass", Sublist.from([{ b: 1, a: 2 }]), '[{"a":2,"b":1}]'],
    ["integer-like keys", { "9": 1, "10": 2, a: 3, "01": 4 }, '{"01":4,"10":2,"9":1,"a":3}'],
    [
      "an own __proto__ key",
      JSON.parse('{"b":1,"__proto__":{"x":1}}'),
      '{"__proto__":{"x":1},"b":1}',
    ],
    [
      "a Secret with integer-like data keys",
      { data: { "2": "Yg==", "10": "YQ==" }, type: "Opaque" },
      '{"data":{"10":"YQ==","2":"Yg=="},"type":"Opaque"}',
    ],
    [
      "more keys than the insertion sort handles",
      Object.fromEntries([..."qwertyuiopasdfghjklz"].map(k => [k, 0])),
      `{${[..."adefghijklopqrstuwyz"].map(k => `"${k}":0`).join(",")}}`,
    ],
  ];
  for (const [title, value, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () => {
      assert.equal(canonicalJson(value), expected);
      assert.equal(canonicalJsonByWriter(value), expected);
    });
  }

  it("given nesting deeper than the fast path copies, returns the same text as the writer", () => {
    let deep: unknown = { leaf: [1, "x"] };
    for (let i = 0; i < 200; i++) deep = { [`k${i % 3}`]: deep, z: i };
    assert.equal(canonicalJson(deep), canonicalJsonByWriter(deep));
    assert.equal(canonicalJson(deep), JSON.stringify(JSON.parse(canonicalJson(deep))));
  });

  it("given an object with keys already sorted, returns what JSON.stringify returns", () => {
    const value = { apiVersion: "v1", kind: "Secret", metadata: { name: "x", namespace: "y" } };
    assert.equal(canonicalJson(value), JSON.stringify(value));
  });

  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const refused: [string, unknown][] = [
    ["NaN", NaN],
    ["Infinity", { a: Infinity }],
    ["-Infinity", [-Infinity]],
    ["a bigint", 1n],
    ["a function", { f: () => 1 }],
    ["a symbol", Symbol("s")],
    ["undefined at the top", undefined],
    ["undefined in an array", [undefined]],
    ["a Date", new Date(0)],
    ["a Map", new Map([["a", 1]])],
    ["a Buffer", Buffer.from("x")],
    ["a cycle", cycle],
  ];
  for (const [title, value] of refused) {
    it(`given ${title}, throws a TypeError`, () => {
      assert.throws(() => canonicalJson(value), TypeError);
      assert.throws(() => canonicalJsonByWriter(value), TypeError);
    });
  }
});
