import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeCertificate } from "../../test/fixtures/certificates";
import { inspectTlsPair } from "./certificate";
import { InspectionCache } from "./inspection-cache";

describe("InspectionCache", () => {
  const a = makeCertificate({ key: "ecdsa", dnsNames: ["a.example.com"], days: 30 });
  const b = makeCertificate({ key: "rsa", dnsNames: ["b.example.com"], days: 30 });
  const now = new Date();

  it("answers as inspectTlsPair does, for good pairs, a mismatched pair and garbage", () => {
    const cache = new InspectionCache();
    const cases = [
      [a.certPem, a.keyPem],
      [b.certPem, b.keyPem],
      [a.certPem, b.keyPem],
      ["not a certificate", a.keyPem],
    ] as const;
    for (let round = 0; round < 2; round++) {
      for (const [cert, key] of cases) {
        assert.deepEqual(cache.inspect(cert, key, now), inspectTlsPair(cert, key, now));
      }
    }
    assert.equal(cache.size, 2, "only the good pairs are kept");
  });

  it("does not use a kept pair outside its validity period: it is inspected again", () => {
    const cache = new InspectionCache();
    assert.ok(cache.inspect(a.certPem, a.keyPem, now).ok);
    const later = new Date(now.getTime() + 400 * 24 * 3600 * 1000);
    const expired = cache.inspect(a.certPem, a.keyPem, later);
    assert.deepEqual(expired, inspectTlsPair(a.certPem, a.keyPem, later));
    assert.equal(expired.ok, false);
    assert.match(JSON.stringify(expired), /expired on/);
  });

  it("keeps at most its size, dropping the least recently used", () => {
    const cache = new InspectionCache(1);
    cache.inspect(a.certPem, a.keyPem, now);
    cache.inspect(b.certPem, b.keyPem, now);
    assert.equal(cache.size, 1);
  });
});
