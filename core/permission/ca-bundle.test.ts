import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCaBundle } from "./ca-bundle";

const CERT = "-----BEGIN CERTIFICATE-----\nMIIBaz==\n-----END CERTIFICATE-----";

describe("parseCaBundle", () => {
  it("given one or more certificates, returns them alone with \\n line ends", () => {
    const text = `# our CA\r\n${CERT.replace(/\n/g, "\r\n")}\r\nnoise\n${CERT}\n`;
    const parsed = parseCaBundle(text, "BULWARK_PERMISSION_CA");
    assert.ok(parsed.ok);
    assert.equal(parsed.value, `${CERT}\n${CERT}\n`);
  });

  it("given no PEM block, names the field", () => {
    assert.deepEqual(parseCaBundle("ca.crt", "BULWARK_PERMISSION_CA_PATH"), {
      ok: false,
      errors: [
        {
          field: "BULWARK_PERMISSION_CA_PATH",
          message: "must hold PEM certificates (-----BEGIN CERTIFICATE-----)",
        },
      ],
      warnings: [],
    });
  });

  it("given a private key among the certificates, refuses it", () => {
    const key = "-----BEGIN PRIVATE KEY-----\nMIGH==\n-----END PRIVATE KEY-----";
    const parsed = parseCaBundle(`${CERT}\n${key}\n`, "ca");
    assert.equal(parsed.ok, false);
    assert.match(
      JSON.stringify(parsed),
      /must hold only certificates; found a PEM PRIVATE KEY block/,
    );
  });
});
