import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CORS_DEFAULTS, parseCors, type CorsConfig } from "./cors";
import { annotationPath } from "./family";
import { annotationKey, quote } from "./validators";

const ENABLE = annotationKey("enable-cors");
const ORIGIN = annotationKey("cors-allow-origin");

const DEFAULTS: CorsConfig = {
  enabled: true,
  allowOrigin: "*",
  allowMethods: [...CORS_DEFAULTS.allowMethods],
  allowHeaders: [...CORS_DEFAULTS.allowHeaders],
  exposeHeaders: [],
  allowCredentials: true,
  maxAgeSeconds: 1728000,
};

describe("parseCors, valid", () => {
  const cases: [string, Record<string, string>, CorsConfig | undefined][] = [
    ["no cors annotation", { "x.io/enable-cors": "true" }, undefined],
    ["enable-cors alone", { [ENABLE]: "true" }, DEFAULTS],
    ["a star origin", { [ENABLE]: "true", [ORIGIN]: " * " }, DEFAULTS],
    [
      "origins with a wildcard subdomain and a port",
      { [ENABLE]: "true", [ORIGIN]: "https://a.com, https://*.B.com:8443,http://localhost:3000" },
      {
        ...DEFAULTS,
        allowOrigin: ["https://a.com", "https://*.b.com:8443", "http://localhost:3000"],
      },
    ],
    [
      "every setting",
      {
        [ENABLE]: "true",
        [annotationKey("cors-allow-methods")]: "GET,POST",
        [annotationKey("cors-allow-headers")]: "X-Token, Content-Type",
        [annotationKey("cors-expose-headers")]: "*",
        [annotationKey("cors-allow-credentials")]: "false",
        [annotationKey("cors-max-age")]: "600",
      },
      {
        ...DEFAULTS,
        allowMethods: ["GET", "POST"],
        allowHeaders: ["X-Token", "Content-Type"],
        exposeHeaders: ["*"],
        allowCredentials: false,
        maxAgeSeconds: 600,
      },
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected ? "its config" : "undefined"}`, () => {
      assert.deepEqual(parseCors(annotations), { ok: true, value: expected, warnings: [] });
    });
  }
});

describe("parseCors, malformed", () => {
  const cases: [string, string, string][] = [
    ["enable-cors", "on", `expected "true" or "false", got "on"`],
    ["cors-allow-origin", "", `(entry 1 is empty)`],
    ["cors-allow-origin", "https://a.com,", `(entry 2 is empty)`],
    [
      "cors-allow-origin",
      "a.com",
      `(entry 1 "a.com" is not scheme://host[:port] (no path, no trailing slash))`,
    ],
    [
      "cors-allow-origin",
      "https://a.com/",
      `(entry 1 "https://a.com/" is not scheme://host[:port] (no path, no trailing slash))`,
    ],
    [
      "cors-allow-origin",
      "https://$host",
      `is not scheme://host[:port] (no path, no trailing slash))`,
    ],
    [
      "cors-allow-origin",
      "https://a.*.com",
      `is not scheme://host[:port] (no path, no trailing slash))`,
    ],
    [
      "cors-allow-origin",
      "https://a.com:70000",
      `(entry 1 "https://a.com:70000" has a port outside 1..65535)`,
    ],
    ["cors-allow-origin", "https://a.com, *", `(entry 2 "*" is only allowed alone)`],
    ["cors-allow-methods", "GET;POST", `(entry 1 "GET;POST" has a character other than letters)`],
    ["cors-allow-methods", "GET,,POST", `(entry 2 is empty)`],
    [
      "cors-allow-headers",
      "X-A, $http_x",
      `(entry 2 "$http_x" has a character other than letters, digits, "-" and "_")`,
    ],
    ["cors-allow-headers", "*", `has a character other than letters, digits, "-" and "_")`],
    [
      "cors-expose-headers",
      "X-A:1",
      `has a character other than letters, digits, "-" and "_" or a lone "*")`,
    ],
    ["cors-allow-credentials", "yes", `expected "true" or "false", got "yes"`],
    [
      "cors-max-age",
      "1d",
      `expected an integer number of seconds between 0 and 2147483647, got "1d"`,
    ],
    [
      "cors-max-age",
      "-1",
      `expected an integer number of seconds between 0 and 2147483647, got "-1"`,
    ],
  ];
  for (const [name, raw, ending] of cases) {
    const key = annotationKey(name);
    it(`given ${name}: ${quote(raw)}, returns an error naming ${key}`, () => {
      const result = parseCors({ [ENABLE]: "true", [key]: raw });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.errors.length, 1);
      assert.equal(result.errors[0]?.field, annotationPath(key));
      assert.ok(result.errors[0]?.message.startsWith("expected "), result.errors[0]?.message);
      assert.ok(result.errors[0]?.message.endsWith(ending), result.errors[0]?.message);
    });
  }
});

describe("parseCors, warnings", () => {
  const cases: [string, Record<string, string>, string[]][] = [
    [
      "cors settings without enable-cors",
      { [ORIGIN]: "https://a.com", [annotationKey("cors-max-age")]: "5" },
      [
        `${ORIGIN} is ignored because ${ENABLE} is not "true"`,
        `${annotationKey("cors-max-age")} is ignored because ${ENABLE} is not "true"`,
      ],
    ],
    ["enable-cors false alone", { [ENABLE]: "false" }, []],
    [
      "the null origin",
      { [ENABLE]: "true", [ORIGIN]: "null" },
      [`${ORIGIN} allows the origin "null", which sandboxed iframes and local files also send`],
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected.length} warning(s)`, () => {
      const result = parseCors(annotations);
      assert.equal(result.ok, true);
      assert.deepEqual(result.warnings, expected);
    });
  }
});
