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
import { isSpaceOrTab, trimEndWhere } from "../trim";
import { hexDigest } from "./digest";
import { TLS_CERT_KEY, TLS_KEY_KEY } from "./objects";

export interface PemBlock {
  type: string;
  der: Buffer;
}

const PEM_BEGIN = "-----BEGIN ";
const PEM_END = "\n-----END ";
const DASHES = "-----";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Go's getLine: the line that starts at `from`, without its "\n", a "\r" before it, and trailing
 * spaces and tabs; and where the next line starts.
 */
function lineAt(text: string, from: number): { line: string; next: number } {
  let end = text.indexOf("\n", from);
  let next: number;
  if (end < 0) {
    end = next = text.length;
  } else {
    next = end + 1;
    if (end > from && text[end - 1] === "\r") end--;
  }
  return { line: trimEndWhere(text, isSpaceOrTab, from, end), next };
}

/**
 * The first well-formed PEM block in `text`, as Go's `pem.Decode` finds it (Go 1.26: the first
 * END line, then the last BEGIN line before it, so repeated BEGINs without an END cost nothing);
 * the block's type is not checked here. Linear in the text: each END line is looked at once, and
 * the search goes on after it (test/oracles/pem: the differential test against Go).
 */
export function firstPemBlock(text: string): PemBlock | undefined {
  for (let rest = 0; ; ) {
    const end = text.indexOf(PEM_END, rest);
    if (end < 0) return undefined;
    const tried = blockEndingAt(text, rest, end);
    if (tried === undefined || typeof tried === "object") return tried;
    // Go resumes after this END's "-----END ", and gives up when it read past it (headers).
    const resume = end + PEM_END.length;
    if (resume < tried) return undefined;
    rest = resume;
  }
}

/**
 * The block whose END line starts at `end` (its newline), from the last BEGIN between `rest` and
 * it; when there is none, where Go's reading stopped (a number); undefined when the text ended.
 */
function blockEndingAt(text: string, rest: number, end: number): PemBlock | number | undefined {
  const begin = text.slice(rest, end).lastIndexOf(PEM_BEGIN);
  if (begin < 0 || (begin > 0 && text[rest + begin - 1] !== "\n")) return rest;
  const typeLine = lineAt(text, rest + begin + PEM_BEGIN.length);
  if (!typeLine.line.endsWith(DASHES)) return typeLine.next;
  const type = typeLine.line.slice(0, -DASHES.length);
  const body = afterHeaders(text, typeLine.next);
  if (body === undefined) return undefined;
  if (body.headers > 0 && end < body.start) return body.start;
  const trailerStart = end + PEM_END.length;
  const trailer = text.slice(trailerStart, trailerStart + type.length + DASHES.length);
  if (trailer !== `${type}${DASHES}`) return body.start;
  if (lineAt(text, trailerStart + trailer.length).line !== "") return body.start;
  const der = end > body.start ? decodeBase64(text.slice(body.start, end)) : Buffer.alloc(0);
  return der === undefined ? body.start : { type, der };
}

/** Skips RFC 1421 header lines (`Proc-Type: …`); undefined when the text ends first. */
function afterHeaders(text: string, from: number): { start: number; headers: number } | undefined {
  let start = from;
  let headers = 0;
  for (;;) {
    if (start >= text.length) return undefined;
    const { line, next } = lineAt(text, start);
    if (!line.includes(":")) return { start, headers };
    headers++;
    start = next;
  }
}

/** Go's StdEncoding after pem removes spaces and tabs: CR and LF skipped, padding strict. */
function decodeBase64(body: string): Buffer | undefined {
  const base64 = body.replace(/[ \t\r\n]/g, "");
  if (base64.length % 4 !== 0 || !BASE64.test(base64)) return undefined;
  return Buffer.from(base64, "base64");
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
