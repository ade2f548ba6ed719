import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHttp2 } from "./http2";
import { parseIngressAnnotations } from "./index";

const KEY = "bulwark.dev/http2";

describe("bulwark.dev/http2", () => {
  it("is absent without the key (the listener's default applies)", () => {
    const parsed = parseHttp2({ "nginx.ingress.kubernetes.io/http2": "false" });
    assert.deepEqual(parsed, { ok: true, value: undefined, warnings: [] });
  });

  it("reads Go's booleans", () => {
    for (const [raw, enabled] of [
      ["false", false],
      ["0", false],
      ["true", true],
      ["True", true],
    ] as const) {
      const parsed = parseHttp2({ [KEY]: raw });
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.value, { enabled });
    }
  });

  it("refuses anything else, naming the key and what was expected", () => {
    const parsed = parseIngressAnnotations({ [KEY]: "off" });
    assert.ok(!parsed.ok);
    assert.deepEqual(parsed.errors, [
      {
        field: `metadata.annotations["${KEY}"]`,
        message: 'expected "true" or "false", got "off"',
      },
    ]);
  });
});
