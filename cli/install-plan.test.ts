import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Secret } from "@kubernetes/client-node";
import { createPki, issueCertificate } from "../hack/control-plane/pki";
import { hmacSecretPlan, servingSecretPlan } from "./install-plan";

const DAY_MS = 86_400_000;
const SERVICE_DNS = "edge-bulwark-permission-server.edge.svc";

function secret(data: Record<string, string>): V1Secret {
  const encoded = Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]);
  return { data: Object.fromEntries(encoded) };
}

describe("install secrets: the serving Secret's plan", () => {
  let dir: string;
  let serving: V1Secret;
  let ends: number;
  before(() => {
    // A real certificate, as openssl makes it (valid 30 days, naming the Service).
    dir = mkdtempSync(join(tmpdir(), "bulwark-plan-"));
    const pki = createPki(dir);
    const issued = issueCertificate(pki, {
      name: "serving",
      commonName: SERVICE_DNS,
      subjectAltNames: [`DNS:${SERVICE_DNS}`, "IP:127.0.0.1"],
      usage: "serverAuth",
    });
    const cert = readFileSync(issued.certPath, "utf8");
    serving = secret({ "tls.crt": cert, "tls.key": "k", "ca.crt": pki.caPem });
    ends = new Date(new X509Certificate(cert).validTo).getTime();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const plan = (current: V1Secret | undefined, daysBeforeEnd: number, more = {}) =>
    servingSecretPlan(current, {
      requiredDns: [SERVICE_DNS],
      now: new Date(ends - daysBeforeEnd * DAY_MS),
      renew: false,
      ...more,
    });

  it("creates a missing Secret, or one without a key the server or the module reads", () => {
    assert.deepEqual(plan(undefined, 100), { action: "create", why: "it does not exist" });
    assert.deepEqual(plan(secret({ "tls.crt": "x", "tls.key": "y" }), 100), {
      action: "create",
      why: "it has no ca.crt",
    });
  });

  it("keeps a certificate that names the Service and is far from its end", () => {
    const kept = plan(serving, 31);
    assert.equal(kept.action, "keep");
    assert.match(kept.why, /^valid until \d{4}-\d\d-\d\dT/);
  });

  it("renews within 30 days of the end, when asked, or when it does not name the Service", () => {
    assert.match(plan(serving, 29).why, /within 30 days/);
    assert.equal(plan(serving, 29).action, "renew");
    assert.deepEqual(plan(serving, 100, { renew: true }), { action: "renew", why: "--renew" });
    const other = plan(serving, 100, { requiredDns: ["bulwark-permission-server.edge.svc"] });
    assert.deepEqual(other, {
      action: "renew",
      why: "it does not name bulwark-permission-server.edge.svc",
    });
  });

  it("renews a tls.crt that is not a certificate", () => {
    const broken = secret({ "tls.crt": "not a pem", "tls.key": "k", "ca.crt": "c" });
    assert.deepEqual(plan(broken, 100), {
      action: "renew",
      why: "its tls.crt is not a readable certificate",
    });
  });
});

describe("install secrets: the HMAC Secret's plan", () => {
  it("creates it, adds a missing key beside the others, and never replaces a key", () => {
    assert.equal(hmacSecretPlan(undefined, "hmackey").action, "create");
    assert.deepEqual(hmacSecretPlan(secret({ other: "x" }), "hmackey"), {
      action: "add-key",
      why: "it has no hmackey",
    });
    assert.deepEqual(hmacSecretPlan(secret({ hmackey: "abc" }), "hmackey"), {
      action: "keep",
      why: "it has hmackey",
    });
  });
});
