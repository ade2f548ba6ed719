import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseHostNames, wwwCounterpart } from "./host-names";
import { annotationKey } from "./validators";

const ALIAS = annotationKey("server-alias");
const WWW = annotationKey("from-to-www-redirect");

describe("parseHostNames", () => {
  it("given ingress-nginx's example '<alias 1>,<alias 2>' with spaces and repeats, returns them sorted once each", () => {
    assert.deepEqual(parseHostNames({ [ALIAS]: "b.example.com, A.example.com,b.example.com" }), {
      ok: true,
      value: { aliases: ["a.example.com", "b.example.com"], fromToWwwRedirect: false },
      warnings: [],
    });
  });

  it("given a wildcard alias, keeps it", () => {
    const result = parseHostNames({ [ALIAS]: "*.example.com" });
    assert.deepEqual(result.ok && result.value?.aliases, ["*.example.com"]);
  });

  it("given from-to-www-redirect 'true', turns it on with no alias", () => {
    assert.deepEqual(parseHostNames({ [WWW]: "true" }), {
      ok: true,
      value: { aliases: [], fromToWwwRedirect: true },
      warnings: [],
    });
  });

  const badAliases: [string, string, RegExp][] = [
    ["a regular expression", "~^www\\d+\\.example\\.com$", /regular expression/],
    ["a suffix wildcard", "www.example.*", /wildcard/],
    ["an empty entry", "a.example.com,,b.example.com", /entry 2 is empty/],
    ["an IP address", "10.0.0.1", /not an IP address/],
    ["an underscore", "my_host.example.com", /RFC 1123/],
  ];
  for (const [title, value, detail] of badAliases) {
    it(`given server-alias with ${title}, refuses it naming the key`, () => {
      const result = parseHostNames({ [ALIAS]: value });
      assert.equal(result.ok, false);
      const [error] = result.ok ? [] : result.errors;
      assert.equal(error?.field, annotationPath(ALIAS));
      assert.match(error?.message ?? "", /^expected host names separated by ","/);
      assert.match(error?.message ?? "", detail);
    });
  }

  it("given from-to-www-redirect 'yes', refuses it", () => {
    assert.deepEqual(parseHostNames({ [WWW]: "yes" }), {
      ok: false,
      errors: [{ field: annotationPath(WWW), message: `expected "true" or "false", got "yes"` }],
      warnings: [],
    });
  });
});

describe("wwwCounterpart", () => {
  it("adds www. to a bare host and takes it from a www. host, as ingress-nginx's BuildRedirects", () => {
    assert.equal(wwwCounterpart("example.com"), "www.example.com");
    assert.equal(wwwCounterpart("www.example.com"), "example.com");
  });

  it("has none for a wildcard host or rules without host", () => {
    assert.equal(wwwCounterpart("*.example.com"), undefined);
    assert.equal(wwwCounterpart(""), undefined);
  });
});
