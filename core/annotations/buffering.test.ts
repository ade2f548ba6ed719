import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseBuffering } from "./buffering";
import { annotationKey } from "./validators";

const BUFFERING = annotationKey("proxy-buffering");
const BODY_BUFFER = annotationKey("client-body-buffer-size");

describe("parseBuffering", () => {
  it('given proxy-buffering "off", accepts it without a word: Bulwark streams', () => {
    assert.deepEqual(parseBuffering({ [BUFFERING]: "off" }), {
      ok: true,
      value: { proxyBuffering: "off", clientBodyBufferSize: undefined },
      warnings: [],
    });
  });

  it('given ingress-nginx\'s example proxy-buffering "on", accepts it with a warning that Bulwark streams', () => {
    const result = parseBuffering({ [BUFFERING]: "On" });
    assert.ok(result.ok);
    assert.equal(result.value?.proxyBuffering, "on");
    assert.deepEqual(result.warnings, [
      `${BUFFERING} "on" has no effect: Bulwark streams responses to the client as they arrive, with backpressure`,
    ]);
  });

  for (const size of ["1000", "1k", "1K", "1m", "8b"]) {
    it(`given ingress-nginx's client-body-buffer-size example "${size}", accepts it`, () => {
      const result = parseBuffering({ [BODY_BUFFER]: size });
      assert.deepEqual(result.ok && result.value?.clientBodyBufferSize, size);
    });
  }

  const bad: [string, string][] = [
    [BUFFERING, "yes"],
    [BUFFERING, "true"],
    [BODY_BUFFER, "1kb"],
    [BODY_BUFFER, "-1"],
    [BODY_BUFFER, "1.5m"],
    [BODY_BUFFER, ""],
  ];
  for (const [key, value] of bad) {
    it(`given ${key} ${JSON.stringify(value)}, refuses it naming the key`, () => {
      const result = parseBuffering({ [key]: value });
      assert.equal(result.ok, false);
      const [error] = result.ok ? [] : result.errors;
      assert.equal(error?.field, annotationPath(key));
      assert.match(error?.message ?? "", /^expected /);
    });
  }
});
