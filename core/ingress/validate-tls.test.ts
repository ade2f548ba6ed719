import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fail, ok, type Result } from "../result";
import type { CertificateFacts } from "../tls/certificate";
import type { Ingress } from "./types";
import { validateIngressTls } from "./validate-tls";

function facts(keyType: "ECC" | "RSA", dnsNames: string[]): Result<CertificateFacts> {
  return ok({
    keyType,
    dnsNames,
    notBefore: new Date(0),
    notAfter: new Date(0),
    sha1: "",
    chainLength: 1,
  });
}

const secrets: Record<string, Result<CertificateFacts>> = {
  "shop-ecc": facts("ECC", ["shop.example.com"]),
  "shop-rsa": facts("RSA", ["shop.example.com"]),
  "wild-ecc": facts("ECC", ["*.example.com"]),
  broken: fail([{ field: 'data["tls.crt"]', message: "expired on 2020-01-01T00:00:00.000Z" }]),
};

function ingress(...tls: { hosts: string[]; secretName: string }[]): Ingress {
  return { spec: { tls } };
}

function check(ing: Ingress) {
  return validateIngressTls(ing, name => secrets[name]);
}

describe("validateIngressTls", () => {
  it("given ECC and RSA certificates on one host, accepts both", () => {
    const report = check(
      ingress(
        { hosts: ["shop.example.com"], secretName: "shop-ecc" },
        { hosts: ["shop.example.com"], secretName: "shop-rsa" },
      ),
    );
    assert.deepEqual(report, { errors: [], warnings: [] });
  });

  it("given a wildcard certificate, accepts a host one label below it", () => {
    assert.deepEqual(
      check(ingress({ hosts: ["a.example.com"], secretName: "wild-ecc" })).errors,
      [],
    );
  });

  it("given two ECC certificates on one host, rejects the second naming the first", () => {
    const { errors } = check(
      ingress(
        { hosts: ["shop.example.com"], secretName: "shop-ecc" },
        { hosts: ["shop.example.com"], secretName: "wild-ecc" },
      ),
    );
    assert.deepEqual(errors, [
      {
        field: "spec.tls[1]",
        message:
          "host shop.example.com already has an ECC certificate from Secret shop-ecc; at most one ECC and one RSA certificate per host",
      },
    ]);
  });

  it("given a host the certificate does not cover, names the host and the certificate's names", () => {
    const { errors } = check(
      ingress({ hosts: ["shop.example.com", "pay.other.com"], secretName: "shop-ecc" }),
    );
    assert.deepEqual(errors, [
      {
        field: "spec.tls[0].hosts[1]",
        message: "pay.other.com is not covered by Secret shop-ecc's certificate (shop.example.com)",
      },
    ]);
  });

  it("given a Secret that cannot be served, names the Secret and why", () => {
    const { errors } = check(ingress({ hosts: ["shop.example.com"], secretName: "broken" }));
    assert.equal(errors[0]?.field, "spec.tls[0].secretName");
    assert.match(
      errors[0]?.message ?? "",
      /Secret broken cannot be served: data\["tls.crt"\]: expired/,
    );
  });

  it("given a Secret that does not exist yet, warns and does not reject", () => {
    const report = check(ingress({ hosts: ["shop.example.com"], secretName: "later" }));
    assert.deepEqual(report.errors, []);
    assert.match(report.warnings[0] ?? "", /Secret later does not exist yet/);
  });
});
