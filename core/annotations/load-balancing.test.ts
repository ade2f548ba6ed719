import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseHashBy, parseLoadBalancing } from "./load-balancing";
import { annotationKey } from "./validators";

const LB = annotationKey("load-balance");
const HASH = annotationKey("upstream-hash-by");
const SUBSET = annotationKey("upstream-hash-by-subset");
const SIZE = annotationKey("upstream-hash-by-subset-size");

describe("parseLoadBalancing", () => {
  it("given no annotation of the family, gives undefined", () => {
    assert.deepEqual(parseLoadBalancing({}), { ok: true, value: undefined, warnings: [] });
  });

  for (const word of ["round_robin", "ewma", " ewma "]) {
    it(`given load-balance ${JSON.stringify(word)}, reads it`, () => {
      const result = parseLoadBalancing({ [LB]: word });
      assert.ok(result.ok);
      assert.equal(result.value?.loadBalance, word.trim());
    });
  }

  for (const word of ["EWMA", "least_conn", "chash", "sticky_balanced", ""]) {
    it(`given load-balance ${JSON.stringify(word)}, refuses it naming the key and the choices`, () => {
      const result = parseLoadBalancing({ [LB]: word });
      assert.ok(!result.ok);
      assert.equal(result.errors[0]?.field, annotationPath(LB));
      assert.match(result.errors[0]!.message, /expected "round_robin" or "ewma"/);
    });
  }

  it("given ingress-nginx's example $request_uri, hashes by the request URI onto single endpoints", () => {
    const result = parseLoadBalancing({ [HASH]: "$request_uri" });
    assert.deepEqual(result, {
      ok: true,
      value: {
        loadBalance: "round_robin",
        hashBy: [{ kind: "request_uri" }],
        subsetSize: undefined,
      },
      warnings: [],
    });
  });

  it("given upstream-hash-by-subset true without a size, groups 3 endpoints (ingress-nginx's default)", () => {
    const result = parseLoadBalancing({ [HASH]: "$remote_addr", [SUBSET]: "true" });
    assert.ok(result.ok);
    assert.equal(result.value?.subsetSize, 3);
    const sized = parseLoadBalancing({ [HASH]: "$remote_addr", [SUBSET]: "true", [SIZE]: "5" });
    assert.ok(sized.ok);
    assert.equal(sized.value?.subsetSize, 5);
  });

  it("given a bad subset or size, refuses naming each key", () => {
    const result = parseLoadBalancing({ [HASH]: "$remote_addr", [SUBSET]: "yes", [SIZE]: "0" });
    assert.ok(!result.ok);
    assert.deepEqual(
      result.errors.map(e => e.field),
      [annotationPath(SUBSET), annotationPath(SIZE)],
    );
  });

  it("warns that load-balance is ignored beside upstream-hash-by, and subset without a hash", () => {
    const both = parseLoadBalancing({ [HASH]: "$request_uri", [LB]: "ewma" });
    assert.deepEqual(both.warnings, [
      `annotation "${LB}" is ignored: "${HASH}" chooses the endpoint`,
    ]);
    const alone = parseLoadBalancing({ [SUBSET]: "true" });
    assert.equal(alone.warnings.length, 1);
    assert.match(alone.warnings[0]!, /ignored without/);
  });
});

describe("parseHashBy", () => {
  it("reads ingress-nginx's documented combinations of variables and text", () => {
    assert.deepEqual(parseHashBy("$request_uri$host"), {
      ok: true,
      value: [{ kind: "request_uri" }, { kind: "host" }],
    });
    assert.deepEqual(parseHashBy("${request_uri}-text-value"), {
      ok: true,
      value: [{ kind: "request_uri" }, { kind: "text", text: "-text-value" }],
    });
  });

  it("reads header, cookie and argument variables (nginx's $http_x_user is the header X-User)", () => {
    assert.deepEqual(parseHashBy("$http_x_user-$cookie_session_id$arg_tenant"), {
      ok: true,
      value: [
        { kind: "header", name: "x-user" },
        { kind: "text", text: "-" },
        { kind: "cookie", name: "session_id" },
        { kind: "arg", name: "tenant" },
      ],
    });
  });

  const refused: [string, RegExp][] = [
    ["$request_uri;", /only letters/],
    ["$upstream_addr", /\$upstream_addr is not a variable Bulwark reads/],
    ["${request_uri", /names no variable/],
    ["abc}", /unbalanced braces/],
    ["$", /names no variable/],
    ["$http_", /is not a variable/],
    ["", /only letters/],
  ];
  for (const [raw, why] of refused) {
    it(`refuses ${JSON.stringify(raw)} saying why`, () => {
      const parsed = parseHashBy(raw);
      assert.ok(!parsed.ok);
      assert.match(parsed.message, /^expected variables/);
      assert.match(parsed.message, why);
    });
  }
});
