import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeCertificate } from "../../test/fixtures/certificates";
import { ingress, view } from "../routing/testkit";
import type { TlsPair } from "../view";
import { compileTls, findCertificates, PairInspections } from "./compile";

const first = makeCertificate({ key: "ecdsa", dnsNames: ["shop.test"], days: 2 });
const second = makeCertificate({ key: "rsa", dnsNames: ["shop.test"] });
const pair = (name: string, cert = first): TlsPair => ({
  namespace: "default",
  name,
  cert: cert.certPem,
  key: cert.keyPem,
});
const shop = (secretName: string) =>
  ingress({
    name: "shop",
    rules: [{ host: "shop.test", paths: [{ path: "/", service: "web" }] }],
    tls: [{ hosts: ["shop.test"], secretName }],
  });
const now = new Date();

describe("key pair inspections kept between TLS compiles", () => {
  it("given the same Secret text again (even as a new object), reuses the inspection", () => {
    const inspections = new PairInspections();
    const a = inspections.inspect("default/tls", pair("tls"), now);
    const b = inspections.inspect("default/tls", pair("tls"), now);
    assert.ok(typeof a === "object" && typeof b === "object");
    assert.equal(b.id, a.id);
    assert.deepEqual(b.dnsNames, ["shop.test"]);
  });

  it("given a rotated certificate under the same name, inspects it again: new key type, new id", () => {
    const inspections = new PairInspections();
    const before = compileTls(view(1, [shop("tls")], [], [pair("tls")]), now, inspections);
    const after = compileTls(view(2, [shop("tls")], [], [pair("tls", second)]), now, inspections);
    const served = (c: typeof before) => findCertificates(c.table, "shop.test")?.pairs[0];
    assert.equal(served(before)?.keyType, "ECC");
    assert.equal(served(after)?.keyType, "RSA");
    assert.notEqual(served(after)?.id, served(before)?.id);
  });

  it("given time past the certificate's validity, reports it expired rather than serving the kept one", () => {
    const inspections = new PairInspections();
    const v = view(1, [shop("tls")], [], [pair("tls")]);
    assert.deepEqual(compileTls(v, now, inspections).problems, []);
    const later = new Date(now.getTime() + 3 * 24 * 3600 * 1000);
    const expired = compileTls(v, later, inspections);
    assert.equal(findCertificates(expired.table, "shop.test"), undefined);
    assert.match(expired.problems.join("\n"), /spec\.tls\[0\]\.secretName: .*expired on/);
  });

  it("forgets Secrets the last compile did not use", () => {
    const inspections = new PairInspections();
    compileTls(view(1, [shop("a")], [], [pair("a"), pair("b")]), now, inspections);
    assert.equal(inspections.size, 1, "only the referenced pair was inspected");
    compileTls(view(2, [shop("b")], [], [pair("a"), pair("b")]), now, inspections);
    assert.equal(inspections.size, 1, "a was dropped when b took its place");
    compileTls(view(3, [], [], []), now, inspections);
    assert.equal(inspections.size, 0);
  });
});
