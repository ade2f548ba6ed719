// The certificate served to clients whose server name matches no TLS host (or who send none):
// self-signed, made in process when the gateway starts, one ECDSA P-256 and one RSA 2048 pair so
// that any client can finish the handshake and get the 404 it asked for.
//
// Why in process, and why this library: the gateway used to run `openssl req -x509`, a subprocess
// and a temp folder at every start (the image then needed an openssl binary and a writable /tmp).
// Node's crypto makes the keys and the signatures but cannot build a certificate, so the one
// thing taken from a library is the DER encoding of the certificate's structure:
// @peculiar/asn1-x509 (PeculiarVentures' RFC 5280 schemas, on which their @peculiar/x509 and
// pkijs builds stand). @peculiar/x509 itself was the first choice, but its 2.x needs a global
// `reflect-metadata` polyfill for its DI container (tsyringe), which the gateway should not carry
// for one certificate. Requiring the fallback from a Secret was the other option; it would make a
// bare install fail to serve TLS for unknown names until someone creates it, for a certificate
// that no client is meant to trust anyway.
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Extension,
  Extensions,
  GeneralName,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
  id_ce_subjectAltName,
} from "@peculiar/asn1-x509";
import { generateKeyPair, randomBytes, sign, X509Certificate, type KeyObject } from "node:crypto";
import { promisify } from "node:util";

export interface PemPair {
  cert: string;
  key: string;
}

export const DEFAULT_CERTIFICATE_NAME = "bulwark-gateway-default";

/** As long as `openssl req -days 3650` made it: the fallback is never renewed while running. */
const VALID_DAYS = 3650;
/** Backdated a little, so a client whose clock is behind still takes it as valid. */
const BACKDATE_MS = 60 * 60 * 1000;

const OID_COMMON_NAME = "2.5.4.3";
/** ecdsa-with-SHA256 (RFC 5758): no parameters. */
const ECDSA_SHA256 = new AlgorithmIdentifier({ algorithm: "1.2.840.10045.4.3.2" });
/** sha256WithRSAEncryption (RFC 4055): parameters NULL. */
const RSA_SHA256 = new AlgorithmIdentifier({
  algorithm: "1.2.840.113549.1.1.11",
  parameters: null,
});

const generate = promisify(generateKeyPair);

async function keyPair(
  kind: "ec" | "rsa",
): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return kind === "ec"
    ? generate("ec", { namedCurve: "P-256" })
    : generate("rsa", { modulusLength: 2048 });
}

/** A positive 16-byte serial (RFC 5280 allows up to 20), random as browsers expect. */
function serialNumber(): ArrayBuffer {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return new Uint8Array(bytes).buffer;
}

function commonName(name: string): Name {
  const cn = new AttributeTypeAndValue({
    type: OID_COMMON_NAME,
    value: new AttributeValue({ utf8String: name }),
  });
  return new Name([new RelativeDistinguishedName([cn])]);
}

async function makePair(kind: "ec" | "rsa", now: Date): Promise<PemPair> {
  const { publicKey, privateKey } = await keyPair(kind);
  const algorithm = kind === "ec" ? ECDSA_SHA256 : RSA_SHA256;
  const name = commonName(DEFAULT_CERTIFICATE_NAME);
  const san = new SubjectAlternativeName([new GeneralName({ dNSName: DEFAULT_CERTIFICATE_NAME })]);
  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber(),
    signature: algorithm,
    issuer: name,
    validity: new Validity({
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter: new Date(now.getTime() + VALID_DAYS * 24 * 60 * 60 * 1000),
    }),
    subject: name,
    subjectPublicKeyInfo: AsnConvert.parse(
      publicKey.export({ type: "spki", format: "der" }),
      SubjectPublicKeyInfo,
    ),
    extensions: new Extensions([
      new Extension({
        extnID: id_ce_subjectAltName,
        critical: false,
        extnValue: new OctetString(AsnConvert.serialize(san)),
      }),
    ]),
  });
  const tbs = Buffer.from(AsnConvert.serialize(tbsCertificate));
  // ECDSA signatures come DER-encoded (Node's default), as X.509 wants; RSA is PKCS #1 v1.5.
  const signature = sign("sha256", tbs, privateKey);
  const der = AsnConvert.serialize(
    new Certificate({
      tbsCertificate,
      tbsCertificateRaw: new Uint8Array(tbs).buffer,
      signatureAlgorithm: algorithm,
      signatureValue: new Uint8Array(signature).buffer,
    }),
  );
  // Parsing it back is the check that the encoding is a certificate; toString() is its PEM.
  const cert = new X509Certificate(Buffer.from(der));
  return {
    cert: cert.toString(),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** A fresh self-signed ECDSA and RSA pair for the default server name. */
export async function makeDefaultCertificates(now: Date = new Date()): Promise<PemPair[]> {
  return Promise.all([makePair("ec", now), makePair("rsa", now)]);
}
