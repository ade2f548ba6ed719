import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseUrlRedirect } from "./url-redirect";
import { annotationKey } from "./validators";

const PERMANENT = annotationKey("permanent-redirect");
const PERMANENT_CODE = annotationKey("permanent-redirect-code");
const TEMPORAL = annotationKey("temporal-redirect");
const TEMPORAL_CODE = annotationKey("temporal-redirect-code");
const APP_ROOT = annotationKey("app-root");

function config(annotations: Record<string, string>) {
  const result = parseUrlRedirect(annotations);
  assert.ok(result.ok, JSON.stringify(result));
  return { value: result.value, warnings: result.warnings };
}

function errorOf(annotations: Record<string, string>) {
  const result = parseUrlRedirect(annotations);
  assert.equal(result.ok, false);
  return result.ok ? undefined : result.errors;
}

describe("parseUrlRedirect", () => {
  it("given ingress-nginx's permanent-redirect example, redirects with 301", () => {
    assert.deepEqual(config({ [PERMANENT]: "https://www.google.com" }), {
      value: {
        redirect: { kind: "permanent", url: "https://www.google.com", status: 301 },
        appRoot: undefined,
      },
      warnings: [],
    });
  });

  it("given ingress-nginx's permanent-redirect-code example '308', redirects with 308", () => {
    const { value } = config({ [PERMANENT]: "https://www.google.com", [PERMANENT_CODE]: "308" });
    assert.deepEqual(value?.redirect, {
      kind: "permanent",
      url: "https://www.google.com",
      status: 308,
    });
  });

  it("given ingress-nginx's temporal-redirect example, redirects with 302; with code 307, 307", () => {
    const url = "https://www.google.com";
    assert.deepEqual(config({ [TEMPORAL]: url }).value?.redirect, {
      kind: "temporal",
      url,
      status: 302,
    });
    const coded = config({ [TEMPORAL]: url, [TEMPORAL_CODE]: "307" });
    assert.deepEqual(coded.value?.redirect, { kind: "temporal", url, status: 307 });
  });

  it("given a URL with a port, path and query, keeps it as written", () => {
    const url = "http://example.com:8080/new/path?a=1&b=2";
    assert.deepEqual(config({ [PERMANENT]: url }).value?.redirect, {
      kind: "permanent",
      url,
      status: 301,
    });
  });

  it("given both redirects, the temporal one wins with a warning naming both keys", () => {
    const { value, warnings } = config({
      [PERMANENT]: "https://a.example",
      [TEMPORAL]: "https://b.example",
    });
    assert.deepEqual(value?.redirect, { kind: "temporal", url: "https://b.example", status: 302 });
    assert.deepEqual(warnings, [
      `${PERMANENT} is ignored because ${TEMPORAL} is set (it wins, as in ingress-nginx)`,
    ]);
  });

  it("given a code without its URL, warns that the code is ignored", () => {
    const { value, warnings } = config({ [PERMANENT_CODE]: "308", [TEMPORAL_CODE]: "307" });
    assert.equal(value?.redirect, undefined);
    assert.deepEqual(warnings, [
      `${PERMANENT_CODE} is ignored because ${PERMANENT} is not set`,
      `${TEMPORAL_CODE} is ignored because ${TEMPORAL} is not set`,
    ]);
  });

  const badUrls: [string, string][] = [
    ["a path, not a URL", "/elsewhere"],
    ["an ftp URL", "ftp://example.com/file"],
    ["no host", "https://"],
    ["an nginx variable", "https://example.com$request_uri"],
    ["a space", "https://example.com/a b"],
    ["a percent escape", "https://example.com/%2e"],
    ["a line break", "https://example.com/\r\nX: y"],
    ["empty", ""],
  ];
  for (const [title, url] of badUrls) {
    it(`given permanent-redirect with ${title}, refuses it naming the key`, () => {
      const [error] = errorOf({ [PERMANENT]: url }) ?? [];
      assert.equal(error?.field, annotationPath(PERMANENT));
      assert.match(error?.message ?? "", /^expected an http:\/\/ or https:\/\/ URL/);
    });
  }

  const badCodes: [string, string, string][] = [
    [PERMANENT_CODE, "309", "300 and 308"],
    [PERMANENT_CODE, "299", "300 and 308"],
    [PERMANENT_CODE, "30x", "300 and 308"],
    [TEMPORAL_CODE, "308", "300 and 307"],
    [TEMPORAL_CODE, " 302", "300 and 307"],
  ];
  for (const [key, code, range] of badCodes) {
    it(`given ${key} "${code}", refuses it: an integer between ${range}`, () => {
      const url = key === PERMANENT_CODE ? PERMANENT : TEMPORAL;
      assert.deepEqual(errorOf({ [url]: "https://example.com", [key]: code }), [
        {
          field: annotationPath(key),
          message: `expected an integer between ${range}, got ${JSON.stringify(code)}`,
        },
      ]);
    });
  }

  it("given ingress-nginx's app-root example '/app1', redirects '/' there", () => {
    assert.deepEqual(config({ [APP_ROOT]: "/app1" }).value, {
      redirect: undefined,
      appRoot: "/app1",
    });
  });

  for (const root of ["app1", "https://example.com/app1", "/app$1", "/a b", "/a?b=1", ""]) {
    it(`given app-root ${JSON.stringify(root)}, refuses it: an absolute path`, () => {
      const [error] = errorOf({ [APP_ROOT]: root }) ?? [];
      assert.equal(error?.field, annotationPath(APP_ROOT));
      assert.match(error?.message ?? "", /^expected an absolute path such as "\/app"/);
    });
  }
});
