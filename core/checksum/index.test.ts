import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as checksum from "./index";

describe("core/checksum public surface", () => {
  const functions = [
    "canonicalJson",
    "compareUtf8",
    "sortUtf8",
    "parseGoInt",
    "tengineIngressId",
    "tengineIngressIdResult",
    "tengineSecretId",
    "tengineSecretIdResult",
    "firstPemBlock",
    "leafCertificateSha1",
    "contentIngressId",
    "contentIngressIdResult",
    "contentSecretId",
    "contentSecretIdResult",
    "ingressContent",
    "secretContent",
    "checksumOfIds",
    "diffIds",
    "computeChecksum",
    "idFunction",
    "ChecksumTracker",
    "objectKey",
    "parsePublisherNamespaces",
    "isTrustedPublication",
  ];
  for (const name of functions) {
    it(`given the folder's index, returns ${name} as a function`, () => {
      assert.equal(typeof (checksum as Record<string, unknown>)[name], "function");
    });
  }

  it("given the folder's index, returns the annotation names the checksum depends on", () => {
    assert.equal(checksum.VERSION_ANNOTATION, "nginx.ingress.kubernetes.io/version");
    assert.equal(checksum.BULWARK_ANNOTATION_PREFIX, "bulwark.dev/");
  });
});
