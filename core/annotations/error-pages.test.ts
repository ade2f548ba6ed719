import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseErrorPages } from "./error-pages";
import { annotationKey } from "./validators";

const CODES = annotationKey("custom-http-errors");
const BACKEND = annotationKey("default-backend");

describe("parseErrorPages", () => {
  it("given ingress-nginx's example '404,415' with default-backend, returns both", () => {
    assert.deepEqual(parseErrorPages({ [CODES]: "404,415", [BACKEND]: "error-pages" }), {
      ok: true,
      value: { codes: [404, 415], defaultBackend: "error-pages" },
      warnings: [],
    });
  });

  it("given codes with spaces and repeats, returns them sorted once each", () => {
    const result = parseErrorPages({ [CODES]: "503, 404 ,503", [BACKEND]: "errors" });
    assert.deepEqual(result.ok && result.value?.codes, [404, 503]);
  });

  it("given default-backend alone, returns no codes (it serves when the route has no endpoint)", () => {
    assert.deepEqual(parseErrorPages({ [BACKEND]: "fallback" }), {
      ok: true,
      value: { codes: [], defaultBackend: "fallback" },
      warnings: [],
    });
  });

  it("given codes without default-backend, warns that the gateway's own page answers", () => {
    const result = parseErrorPages({ [CODES]: "503" });
    assert.ok(result.ok);
    assert.deepEqual(result.value, { codes: [503], defaultBackend: undefined });
    assert.match(result.warnings[0] ?? "", /without .*default-backend.*own plain page/);
  });

  for (const codes of ["302", "600", "40x", "404;503", "4044", ""]) {
    it(`given custom-http-errors ${JSON.stringify(codes)}, refuses it naming the key`, () => {
      const result = parseErrorPages({ [CODES]: codes, [BACKEND]: "errors" });
      assert.equal(result.ok, false);
      const [error] = result.ok ? [] : result.errors;
      assert.equal(error?.field, annotationPath(CODES));
      assert.match(
        error?.message ?? "",
        /^expected HTTP statuses from 400 to 599 separated by ","/,
      );
    });
  }

  for (const name of ["Errors", "1errors", "errors-", "ns/errors", "a".repeat(64), ""]) {
    it(`given default-backend ${JSON.stringify(name.slice(0, 20))}, refuses it naming the key`, () => {
      const result = parseErrorPages({ [BACKEND]: name });
      assert.equal(result.ok, false);
      const [error] = result.ok ? [] : result.errors;
      assert.equal(error?.field, annotationPath(BACKEND));
      assert.match(
        error?.message ?? "",
        /^expected the name of a Service in the Ingress's namespace/,
      );
    });
  }
});
