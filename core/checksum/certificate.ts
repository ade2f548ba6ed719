// The leaf certificate of a TLS Secret, as Tengine-Ingress finds it (internal/net/ssl/ssl.go,
// CreateSSLCert): the FIRST PEM block of tls.crt must be a CERTIFICATE that parses, tls.key must
// be there, and the ID uses the SHA-1 of the leaf's DER.
//
// Tengine also leaves out a Secret whose key does not match its certificate. That check is not
// repeated here: reading a private key costs 0.6-0.8 ms in Node 20's OpenSSL 3 (measured, RSA and
// P-256 alike), which over 1k Secrets would take the whole full-verify budget (DESIGN.md: 1 s),
// and ingress-guard admission already denies such a pair (core/tls/certificate.ts), so no
// mismatched Secret reaches the cluster through Bulwark.
import { X509Certificate } from "node:crypto";
import { fail, ok, type Result } from "../result";
import { hexDigest } from "./digest";
import { TLS_CERT_KEY, TLS_KEY_KEY } from "./objects";

export interface PemBlock {
  type: string;
  der: Buffer;
}

// A BEGIN line at the start of the text or of a line, as Go's encoding/pem looks for it.
const BEGIN_LINE = /(?:^|\n)-----BEGIN ([^\r\n]*)-----[ \t]*\r?\n/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The first well-formed PEM block in `text`, like Go's `pem.Decode`: text before it is skipped,
 * a malformed block is passed over, and the block's type is not checked here.
 */
export function firstPemBlock(text: string): PemBlock | undefined {
  const begin = new RegExp(BEGIN_LINE);
  for (let match = begin.exec(text); match; match = begin.exec(text)) {
    const type = match[1] ?? "";
    const block = readBlock(text, type, match.index + match[0].length);
    if (block) return block;
    begin.lastIndex = match.index + 1;
  }
  return undefined;
}

function readBlock(text: string, type: string, bodyStart: number): PemBlock | undefined {
  // Searching from the newline that ends the BEGIN line also finds the END of an empty body.
  const end = text.indexOf(`\n-----END ${type}-----`, bodyStart - 1);
  if (end < 0) return undefined;
  const body = end < bodyStart ? "" : text.slice(bodyStart, end);
  const base64 = withoutHeaders(body).replace(/[ \t\r\n]/g, "");
  // Go's StdEncoding is strict: whole quanta, padding only at the end.
  if (base64.length % 4 !== 0 || !BASE64.test(base64)) return undefined;
  return { type, der: Buffer.from(base64, "base64") };
}

/** Drops RFC 1421 headers (`Proc-Type: …` lines and the blank line after them). */
function withoutHeaders(body: string): string {
  const lines = body.split("\n");
  let first = 0;
  while (first < lines.length && (lines[first] ?? "").includes(":")) first++;
  if (first > 0 && (lines[first] ?? "").trim() === "") first++;
  return first === 0 ? body : lines.slice(first).join("\n");
}

/**
 * Lowercase hex SHA-1 of the DER of the first certificate in `certPem`, once it parses and a key
 * is present; otherwise why the Secret is left out.
 */
export function leafCertificateSha1(
  certPem: string | undefined,
  keyPem: string | undefined,
): Result<string> {
  const certField = `data["${TLS_CERT_KEY}"]`;
  if (certPem === undefined) return fail([{ field: certField, message: "tls.crt is missing" }]);
  if (keyPem === undefined) {
    return fail([{ field: `data["${TLS_KEY_KEY}"]`, message: "tls.key is missing" }]);
  }
  const block = firstPemBlock(certPem);
  if (!block) return fail([{ field: certField, message: "tls.crt holds no certificate" }]);
  if (block.type !== "CERTIFICATE") {
    const message = `tls.crt starts with a ${block.type} block, not a certificate`;
    return fail([{ field: certField, message }]);
  }
  if (!parses(block.der)) {
    return fail([{ field: certField, message: "tls.crt's first certificate does not parse" }]);
  }
  return ok(hexDigest("sha1", block.der));
}

function parses(der: Buffer): boolean {
  try {
    new X509Certificate(der);
    return true;
  } catch {
    // OpenSSL's reason adds nothing for a user: the Secret is simply left out, as in Tengine.
    return false;
  }
}
