import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseProxy, type ProxyConfig } from "./proxy";
import { annotationKey, quote } from "./validators";

describe("parseProxy, valid", () => {
  const cases: [string, Record<string, string>, ProxyConfig | undefined][] = [
    ["no proxy annotation", {}, undefined],
    [
      "every annotation",
      {
        [annotationKey("proxy-connect-timeout")]: "5",
        [annotationKey("proxy-read-timeout")]: "3600",
        [annotationKey("proxy-send-timeout")]: "120",
        [annotationKey("proxy-body-size")]: "64m",
        [annotationKey("proxy-next-upstream-tries")]: "0",
      },
      {
        connectTimeoutSeconds: 5,
        readTimeoutSeconds: 3600,
        sendTimeoutSeconds: 120,
        bodySize: 64 * 1024 * 1024,
        nextUpstreamTries: 0,
      },
    ],
    ["an unlimited body", { [annotationKey("proxy-body-size")]: "0" }, { bodySize: "unlimited" }],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${JSON.stringify(expected)}`, () => {
      const result = parseProxy(annotations);
      assert.equal(result.ok, true);
      if (result.ok) assert.deepEqual(result.value, expected);
    });
  }
});

describe("parseProxy, malformed", () => {
  const seconds = "expected an integer number of seconds between 1 and 2147483";
  const size = `expected a size in bytes with an optional k, m or g suffix (e.g. "8m", "0" for no limit)`;
  const cases: [string, string, string][] = [
    ["proxy-connect-timeout", "abc", `${seconds}, got "abc"`],
    ["proxy-connect-timeout", "0", `${seconds}, got "0"`],
    ["proxy-read-timeout", "60s", `${seconds}, got "60s" (no unit)`],
    ["proxy-read-timeout", "1.5", `${seconds}, got "1.5"`],
    ["proxy-send-timeout", "-5", `${seconds}, got "-5"`],
    ["proxy-send-timeout", "9999999999", `${seconds}, got "9999999999"`],
    ["proxy-body-size", "8mb", `${size}, got "8mb"`],
    ["proxy-body-size", "big", `${size}, got "big"`],
    ["proxy-next-upstream-tries", "three", `expected an integer between 0 and 100, got "three"`],
    ["proxy-next-upstream-tries", "101", `expected an integer between 0 and 100, got "101"`],
  ];
  for (const [name, raw, message] of cases) {
    const key = annotationKey(name);
    it(`given ${name}: ${quote(raw)}, returns an error naming ${key}`, () => {
      assert.deepEqual(parseProxy({ [key]: raw }), {
        ok: false,
        errors: [{ field: annotationPath(key), message }],
        warnings: [],
      });
    });
  }
});
