import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { tengineIngressId, tengineIngressIdResult, tengineSecretIdResult } from "./tengine";

const VERSION = "nginx.ingress.kubernetes.io/version";

describe("tengineIngressId", () => {
  const ingress = (name: string | undefined, annotations?: Record<string, string>) => ({
    metadata: { name, namespace: "web", annotations },
    spec: { rules: [{ host: "a.example" }] },
  });
  const cases: [string, ReturnType<typeof ingress>, string | undefined][] = [
    [
      "a name ending in an integer and version 1",
      ingress("alibaba-dt-com-123992", { [VERSION]: "1" }),
      "123992-1",
    ],
    ["leading zeros in name and version", ingress("site-007", { [VERSION]: "02" }), "7-2"],
    ["a plus sign in the suffix", ingress("site-+5", { [VERSION]: "1" }), "5-1"],
    ["a doubled dash before the suffix", ingress("site--5", { [VERSION]: "1" }), "5-1"],
    ["a negative version", ingress("site-7", { [VERSION]: "-3" }), "7--3"],
    ["a name of only a dash and digits", ingress("-12", { [VERSION]: "1" }), "12-1"],
    ["no dash in the name", ingress("123992", { [VERSION]: "1" }), undefined],
    ["no suffix after the last dash", ingress("site-", { [VERSION]: "1" }), undefined],
    ["a non-integer suffix", ingress("site-abc", { [VERSION]: "1" }), undefined],
    ["a suffix beyond int64", ingress("site-9223372036854775808", { [VERSION]: "1" }), undefined],
    ["no name", ingress(undefined, { [VERSION]: "1" }), undefined],
    ["version 0", ingress("site-1", { [VERSION]: "0" }), undefined],
    ["version -0", ingress("site-1", { [VERSION]: "-0" }), undefined],
    ["no version annotation", ingress("site-1", { other: "1" }), undefined],
    ["no annotations", ingress("site-1"), undefined],
    ["a non-integer version", ingress("site-1", { [VERSION]: "1.0" }), undefined],
    ["an empty version", ingress("site-1", { [VERSION]: "" }), undefined],
    ["a version with spaces", ingress("site-1", { [VERSION]: " 1" }), undefined],
  ];
  for (const [title, object, expected] of cases) {
    it(`given ${title}, returns ${expected ?? "undefined"}`, () => {
      assert.equal(tengineIngressId(object), expected);
    });
  }

  const reasons: [string, ReturnType<typeof ingress>, string[]][] = [
    ["no version", ingress("site-1", {}), [`no ${VERSION} annotation`]],
    ["version 0", ingress("site-1", { [VERSION]: "0" }), [`${VERSION} is 0`]],
    [
      "a non-integer version",
      ingress("site-1", { [VERSION]: "v2" }),
      [`${VERSION} is not an integer: "v2"`],
    ],
    [
      "a non-integer suffix",
      ingress("site-x", { [VERSION]: "1" }),
      ['name does not end in "-<integer>": "site-x"'],
    ],
    [
      "both wrong",
      ingress("site", {}),
      [`no ${VERSION} annotation`, 'name does not end in "-<integer>": "site"'],
    ],
  ];
  for (const [title, object, messages] of reasons) {
    it(`given ${title}, returns why the ingress is left out`, () => {
      const result = tengineIngressIdResult(object);
      assert.equal(result.ok, false);
      assert.deepEqual(result.ok ? [] : result.errors.map(e => e.message), messages);
    });
  }
});

describe("tengineSecretIdResult", () => {
  it("given a secret without a version, returns the reason without reading tls.crt", () => {
    const result = tengineSecretIdResult({
      metadata: { name: "cert-1" },
      data: { "tls.crt": "!!" },
    });
    assert.deepEqual(result.ok ? [] : result.errors.map(e => e.message), [
      `no ${VERSION} annotation`,
    ]);
  });

  it("given a secret whose tls.crt holds no certificate, returns that reason", () => {
    const secret = {
      metadata: { name: "cert-1", annotations: { [VERSION]: "1" } },
      data: {
        "tls.crt": Buffer.from("not a certificate").toString("base64"),
        "tls.key": Buffer.from("not a key").toString("base64"),
      },
    };
    const result = tengineSecretIdResult(secret);
    assert.deepEqual(result.ok ? [] : result.errors.map(e => e.message), [
      "tls.crt holds no certificate",
    ]);
  });
});
