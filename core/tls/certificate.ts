// What admission and the gateway need to know about a kubernetes.io/tls Secret's data, and the
// reasons it cannot be served. Pure apart from node:crypto; the caller passes `now`.
import { X509Certificate, createHash, createPrivateKey, type KeyObject } from "node:crypto";
import { fail, ok, type FieldError, type Result } from "../result";
import { nameCoversHost } from "../ingress/hostname";

export type KeyType = "ECC" | "RSA";

export interface CertificateFacts {
  keyType: KeyType;
  /** DNS names from subjectAltName, lowercased. */
  dnsNames: string[];
  notBefore: Date;
  notAfter: Date;
  /** SHA-1 hex of the leaf certificate's DER (Tengine's certificate ID). */
  sha1: string;
  /** Certificates in tls.crt, leaf first. */
  chainLength: number;
}

export const CERT_FIELD = 'data["tls.crt"]';
export const KEY_FIELD = 'data["tls.key"]';

const BEGIN_CERTIFICATE = "-----BEGIN CERTIFICATE-----";
const END_CERTIFICATE = "-----END CERTIFICATE-----";

/**
 * Each BEGIN CERTIFICATE … END CERTIFICATE block (at least one character between), in order. By
 * searching, not with a lazy regular expression: that rescanned the rest of the text from every
 * BEGIN without an END, so 1 MiB of BEGIN lines in a tenant's Secret took seconds (quadratic).
 */
export function certificateBlocks(text: string): string[] {
  const blocks: string[] = [];
  for (let from = 0; ; ) {
    const begin = text.indexOf(BEGIN_CERTIFICATE, from);
    if (begin < 0) return blocks;
    const end = text.indexOf(END_CERTIFICATE, begin + BEGIN_CERTIFICATE.length + 1);
    // No END after this BEGIN means none after any later one either.
    if (end < 0) return blocks;
    blocks.push(text.slice(begin, end + END_CERTIFICATE.length));
    from = end + END_CERTIFICATE.length;
  }
}

/**
 * The largest RSA modulus served, in bits. Each TLS handshake signs with the key, so its size is
 * what a client's connection costs the gateway (one signature: 2 048 bits 0.8 ms, 8 192 bits 29 ms,
 * 16 384 bits 212 ms); and Go's crypto/tls clients refuse a server key over 8 192 bits
 * (CVE-2023-29409), so a larger one serves no Go client anyway.
 */
export const MAX_RSA_BITS = 8192;

function keySizeProblems(leaf: X509Certificate): FieldError[] {
  const bits = leaf.publicKey.asymmetricKeyDetails?.modulusLength;
  if (bits === undefined || bits <= MAX_RSA_BITS) return [];
  return [
    {
      field: CERT_FIELD,
      message: `has an RSA key of ${bits} bits; at most ${MAX_RSA_BITS} are served (every TLS handshake signs with it, and Go's clients refuse larger keys)`,
    },
  ];
}

function keyTypeOf(certificate: X509Certificate): KeyType | undefined {
  const type = certificate.publicKey.asymmetricKeyType;
  if (type === "rsa" || type === "rsa-pss") return "RSA";
  if (type === "ec") return "ECC";
  return undefined;
}

function parseChain(certPem: string): Result<X509Certificate[]> {
  const blocks = certificateBlocks(certPem);
  if (blocks.length === 0)
    return fail([{ field: CERT_FIELD, message: "holds no PEM certificate" }]);
  const chain: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block));
    } catch (error) {
      const which = index === 0 ? "the leaf certificate" : `certificate ${index + 1} of the chain`;
      return fail([
        { field: CERT_FIELD, message: `${which} is not valid X.509 (${(error as Error).message})` },
      ]);
    }
  }
  return ok(chain);
}

function parseKey(keyPem: string): Result<KeyObject> {
  try {
    return ok(createPrivateKey(keyPem));
  } catch (error) {
    return fail([
      {
        field: KEY_FIELD,
        message: `is not a readable PEM private key (${(error as Error).message})`,
      },
    ]);
  }
}

/**
 * The leaf's DNS names. Node quotes a name holding ", " or other separators (since the fix of
 * CVE-2021-44532, which let "x, DNS:victim" read as two names); a quoted one is no host name, so
 * it is left out rather than unquoted.
 */
function dnsNamesOf(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? "")
    .split(", ")
    .filter(entry => entry.startsWith("DNS:") && !entry.startsWith('DNS:"'))
    .map(entry => entry.slice(4).toLowerCase());
}

function validityProblems(now: Date, notBefore: Date, notAfter: Date): FieldError[] {
  if (now > notAfter)
    return [{ field: CERT_FIELD, message: `expired on ${notAfter.toISOString()}` }];
  if (now < notBefore)
    return [{ field: CERT_FIELD, message: `is not valid before ${notBefore.toISOString()}` }];
  return [];
}

/**
 * Parses and checks a certificate/key pair: readable, matching, RSA or ECDSA, valid at `now`.
 * `now` undefined leaves the validity period out: the gateway serves a certificate that has
 * expired since admission rather than take its hosts down (availability; clients judge it).
 */
export function inspectTlsPair(
  certPem: string,
  keyPem: string,
  now: Date | undefined,
): Result<CertificateFacts> {
  try {
    return inspectParsed(certPem, keyPem, now);
  } catch (error) {
    // Node reads a certificate lazily: a mangled one constructs, then a getter (its public key)
    // throws. That is the tenant's bad certificate, not a failure of the review.
    const detail = error instanceof Error ? error.message : String(error);
    return fail([
      { field: CERT_FIELD, message: `is not a certificate Bulwark can read (${detail})` },
    ]);
  }
}

function inspectParsed(
  certPem: string,
  keyPem: string,
  now: Date | undefined,
): Result<CertificateFacts> {
  const chain = parseChain(certPem);
  const key = parseKey(keyPem);
  const errors: FieldError[] = [...(chain.ok ? [] : chain.errors), ...(key.ok ? [] : key.errors)];
  if (!chain.ok || !key.ok) return fail(errors);

  const leaf = chain.value[0]!;
  const keyType = keyTypeOf(leaf);
  if (!keyType) {
    errors.push({
      field: CERT_FIELD,
      message: `has a ${leaf.publicKey.asymmetricKeyType} key; only RSA and ECDSA are served`,
    });
  }
  errors.push(...keySizeProblems(leaf));
  if (!leaf.checkPrivateKey(key.value)) {
    errors.push({
      field: KEY_FIELD,
      message: "does not match the public key of the leaf certificate in tls.crt",
    });
  }
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (now !== undefined) errors.push(...validityProblems(now, notBefore, notAfter));
  if (errors.length > 0 || !keyType) return fail(errors);

  return ok({
    keyType,
    dnsNames: dnsNamesOf(leaf),
    notBefore,
    notAfter,
    sha1: createHash("sha1").update(leaf.raw).digest("hex"),
    chainLength: chain.value.length,
  });
}

/** Whether the certificate's subjectAltName DNS names cover `host` (no Common Name fallback, as modern clients do). */
export function certificateCoversHost(
  facts: Pick<CertificateFacts, "dnsNames">,
  host: string,
): boolean {
  return facts.dnsNames.some(name => nameCoversHost(name, host));
}
