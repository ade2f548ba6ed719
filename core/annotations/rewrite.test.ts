import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseRewrite, type RewriteConfig } from "./rewrite";
import { annotationKey, quote } from "./validators";

const TARGET = annotationKey("rewrite-target");
const REGEX = annotationKey("use-regex");

describe("parseRewrite, valid", () => {
  const none = { target: undefined, captureRefs: [], useRegex: undefined, regexPaths: false };
  const cases: [string, Record<string, string>, RewriteConfig | undefined, string[]][] = [
    ["no rewrite annotation", {}, undefined, []],
    ["use-regex alone", { [REGEX]: "true" }, { ...none, useRegex: true, regexPaths: true }, []],
    ["use-regex false", { [REGEX]: "false" }, { ...none, useRegex: false }, []],
    [
      "a plain target, which implies regex paths as in ingress-nginx",
      { [TARGET]: "/" },
      { ...none, target: "/", regexPaths: true },
      [],
    ],
    [
      "a target with captures",
      { [TARGET]: "/api/$2/$1/$2", [REGEX]: "true" },
      { target: "/api/$2/$1/$2", captureRefs: [1, 2], useRegex: true, regexPaths: true },
      [],
    ],
    [
      "a target with use-regex false",
      { [TARGET]: "/$1", [REGEX]: "false" },
      { target: "/$1", captureRefs: [1], useRegex: false, regexPaths: true },
      [
        `${REGEX} is "false" but ${TARGET} makes the paths regular expressions anyway, as in ingress-nginx`,
      ],
    ],
  ];
  for (const [title, annotations, expected, warnings] of cases) {
    it(`given ${title}, returns ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseRewrite(annotations), { ok: true, value: expected, warnings });
    });
  }
});

describe("parseRewrite, malformed", () => {
  const path = `expected a path of letters, digits, "-._~:/" and capture references "$1".."$9"`;
  const cases: [string, string, string][] = [
    ["rewrite-target", "", `${path}, got ""`],
    ["rewrite-target", "/a b", `${path}, got "/a b"`],
    ["rewrite-target", "/a?x=1", `${path}, got "/a?x=1"`],
    ["rewrite-target", "/$host", `${path}, got "/$host" ("$" must be followed by a digit 1-9)`],
    ["rewrite-target", "/$0", `${path}, got "/$0" ("$" must be followed by a digit 1-9)`],
    ["rewrite-target", "/a$", `${path}, got "/a$" ("$" must be followed by a digit 1-9)`],
    ["use-regex", "yes", `expected "true" or "false", got "yes"`],
  ];
  for (const [name, raw, message] of cases) {
    const key = annotationKey(name);
    it(`given ${name}: ${quote(raw)}, returns an error naming ${key}`, () => {
      assert.deepEqual(parseRewrite({ [key]: raw }), {
        ok: false,
        errors: [{ field: annotationPath(key), message }],
        warnings: [],
      });
    });
  }
});
