import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseRedirect } from "./redirect";
import { annotationKey } from "./validators";
import type { Result } from "../result";

const SSL = annotationKey("ssl-redirect");
const FORCE = annotationKey("force-ssl-redirect");

describe("parseRedirect", () => {
  const cases: [string, Record<string, string> | undefined, Result<unknown>][] = [
    ["no annotations", {}, { ok: true, value: undefined, warnings: [] }],
    [
      "ssl-redirect false",
      { [SSL]: "false" },
      { ok: true, value: { sslRedirect: false, forceSslRedirect: false }, warnings: [] },
    ],
    [
      "force-ssl-redirect alone, leaving ssl-redirect to the TLS default",
      { [FORCE]: "true" },
      { ok: true, value: { sslRedirect: undefined, forceSslRedirect: true }, warnings: [] },
    ],
    [
      "both malformed",
      { [SSL]: "on", [FORCE]: "TRUE " },
      {
        ok: false,
        errors: [
          { field: annotationPath(SSL), message: `expected "true" or "false", got "on"` },
          { field: annotationPath(FORCE), message: `expected "true" or "false", got "TRUE "` },
        ],
        warnings: [],
      },
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns ${expected.ok ? "its config" : "errors naming both keys"}`, () => {
      assert.deepEqual(parseRedirect(annotations), expected);
    });
  }
});
