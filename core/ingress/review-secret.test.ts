import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeCertificate } from "../../test/fixtures/certificates";
import { inspectTlsPair } from "../tls/certificate";
import type { Ingress } from "./types";
import { reviewTlsSecret } from "./review-secret";

const shopEcc = makeCertificate({ key: "ecdsa", dnsNames: ["shop.example.com"] });
const otherEcc = makeCertificate({ key: "ecdsa", dnsNames: ["other.example.com"] });
const wildEcc = makeCertificate({ key: "ecdsa", dnsNames: ["*.example.com"] });
// After the certificates: openssl truncates notBefore to the second it signs in.
const NOW = new Date();

const site: Ingress = {
  metadata: { name: "site-1", namespace: "shop" },
  spec: {
    tls: [
      { hosts: ["shop.example.com"], secretName: "shop-tls" },
      { hosts: ["shop.example.com"], secretName: "wild-tls" },
    ],
  },
};

describe("reviewTlsSecret", () => {
  it("given a valid pair that covers its users' hosts, returns no errors", () => {
    const review = reviewTlsSecret({ name: "shop-tls", ...shopEcc }, NOW, [site], () => undefined);
    assert.deepEqual(review.errors, []);
  });

  it("given a pair that no longer covers a user's host, names the Ingress and the host", () => {
    const review = reviewTlsSecret({ name: "shop-tls", ...otherEcc }, NOW, [site], () => undefined);
    assert.equal(review.errors.length, 1);
    assert.match(
      review.errors[0]!.message,
      /^breaks Ingress shop\/site-1: spec\.tls\[0\]\.hosts\[0\]: shop\.example\.com is not covered by Secret shop-tls's certificate \(other\.example\.com\)$/,
    );
  });

  it("given a key type that a sibling Secret already provides for the host, rejects it", () => {
    const wild = inspectTlsPair(wildEcc.certPem, wildEcc.keyPem, NOW);
    const review = reviewTlsSecret({ name: "shop-tls", ...shopEcc }, NOW, [site], name =>
      name === "wild-tls" ? wild : undefined,
    );
    assert.match(review.errors[0]?.message ?? "", /already has an ECC certificate/);
  });

  it("given a problem that exists without this Secret, does not blame it", () => {
    const broken: Ingress = {
      metadata: { name: "b-2", namespace: "shop" },
      spec: {
        tls: [
          { hosts: ["x.other.org"], secretName: "wild-tls" },
          { hosts: ["shop.example.com"], secretName: "shop-tls" },
        ],
      },
    };
    const wild = inspectTlsPair(wildEcc.certPem, wildEcc.keyPem, NOW);
    const review = reviewTlsSecret({ name: "shop-tls", ...shopEcc }, NOW, [broken], name =>
      name === "wild-tls" ? wild : undefined,
    );
    assert.deepEqual(review.errors, []);
  });

  it("given an unreadable key, returns the key field's error", () => {
    const secret = { name: "shop-tls", certPem: shopEcc.certPem, keyPem: "nope" };
    const review = reviewTlsSecret(secret, NOW, [site], () => undefined);
    assert.equal(review.errors[0]?.field, 'data["tls.key"]');
  });
});
