// Reads what a TLS ClientHello offers (server name, signature algorithms, cipher suites) so the
// gateway can pick the ECDSA or the RSA certificate of a host before the handshake starts.
//
// Why not SNICallback: Node copies only one certificate (the last loaded) from the context the
// callback returns into the connection (UseSNIContext in src/crypto/crypto_context.cc), so an
// ECDSA + RSA context behaves as RSA-only there. Choosing the context per connection works.

export interface ClientHello {
  /** The SNI host name, lowercased; undefined when the client sent none. */
  serverName: string | undefined;
  /** Whether the client can verify an ECDSA certificate with a suite it offers. */
  acceptsEcdsa: boolean;
  /** Whether the client can verify an RSA certificate with a suite it offers. */
  acceptsRsa: boolean;
}

export type HelloRead =
  | { state: "complete"; hello: ClientHello }
  | { state: "partial" }
  | { state: "not-tls" };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0x0000;
const EXT_SIGNATURE_ALGORITHMS = 0x000d;
/** A ClientHello larger than this is not read; the default choice applies. */
export const MAX_HELLO_BYTES = 16 * 1024 + 5;

function isEcdsaSigalg(code: number): boolean {
  // ecdsa_{sha1,sha256,sha384,sha512}: 0x0203, 0x0403, 0x0503, 0x0603
  return (code & 0xff) === 0x03 && code >> 8 >= 0x02 && code >> 8 <= 0x06;
}

function isRsaSigalg(code: number): boolean {
  // rsa_pkcs1_*: 0x0201, 0x0401, 0x0501, 0x0601; rsa_pss_rsae_*: 0x0804-0x0806; rsa_pss_pss_*: 0x0809-0x080b
  if ((code & 0xff) === 0x01 && code >> 8 >= 0x02 && code >> 8 <= 0x06) return true;
  return (code >= 0x0804 && code <= 0x0806) || (code >= 0x0809 && code <= 0x080b);
}

// TLS 1.2 suites that authenticate with ECDSA; anything else non-1.3 with a certificate is RSA.
const ECDSA_SUITES = new Set([
  0xc006, 0xc007, 0xc008, 0xc009, 0xc00a, 0xc023, 0xc024, 0xc02b, 0xc02c, 0xc072, 0xc073, 0xc086,
  0xc087, 0xc0ac, 0xc0ad, 0xc0ae, 0xc0af, 0xcca9,
]);

function isTls13Suite(code: number): boolean {
  return code >= 0x1301 && code <= 0x1305;
}

/** Signalling values and GREASE, not real suites: renegotiation info, fallback, 0x?a?a. */
function isSignal(code: number): boolean {
  return code === 0x00ff || code === 0x5600 || (code & 0x0f0f) === 0x0a0a;
}

class Reader {
  constructor(
    private readonly data: Buffer,
    public offset: number,
    private readonly end: number,
  ) {}

  get left(): number {
    return this.end - this.offset;
  }

  u8(): number {
    if (this.left < 1) throw new RangeError("short");
    return this.data[this.offset++]!;
  }

  u16(): number {
    if (this.left < 2) throw new RangeError("short");
    const value = this.data.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  u24(): number {
    return (this.u8() << 16) | this.u16();
  }

  skip(length: number): void {
    if (this.left < length) throw new RangeError("short");
    this.offset += length;
  }

  /** A sub-reader over the next `length` bytes. */
  slice(length: number): Reader {
    if (this.left < length) throw new RangeError("short");
    const sub = new Reader(this.data, this.offset, this.offset + length);
    this.offset += length;
    return sub;
  }

  text(length: number): string {
    if (this.left < length) throw new RangeError("short");
    const value = this.data.toString("latin1", this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
}

interface Offer {
  serverName: string | undefined;
  sigalgs: number[] | undefined;
  suites: number[];
}

function readServerName(ext: Reader): string | undefined {
  const list = ext.slice(ext.u16());
  while (list.left > 0) {
    const type = list.u8();
    const name = list.text(list.u16());
    if (type === 0) return name.toLowerCase();
  }
  return undefined;
}

function readExtensions(extensions: Reader, offer: Offer): void {
  while (extensions.left >= 4) {
    const type = extensions.u16();
    const ext = extensions.slice(extensions.u16());
    if (type === EXT_SERVER_NAME) offer.serverName = readServerName(ext);
    if (type === EXT_SIGNATURE_ALGORITHMS) {
      const list = ext.slice(ext.u16());
      offer.sigalgs = [];
      while (list.left >= 2) offer.sigalgs.push(list.u16());
    }
  }
}

function readHelloBody(body: Reader): Offer {
  body.skip(2 + 32); // client_version, random
  body.skip(body.u8()); // session_id
  const suites = body.slice(body.u16());
  const offer: Offer = { serverName: undefined, sigalgs: undefined, suites: [] };
  while (suites.left >= 2) offer.suites.push(suites.u16());
  body.skip(body.u8()); // compression methods
  if (body.left >= 2) readExtensions(body.slice(body.u16()), offer);
  return offer;
}

function decide(offer: Offer): ClientHello {
  const tls13 = offer.suites.some(isTls13Suite);
  const ecdsaSuite = tls13 || offer.suites.some(s => ECDSA_SUITES.has(s));
  const rsaSuite =
    tls13 || offer.suites.some(s => !isTls13Suite(s) && !ECDSA_SUITES.has(s) && !isSignal(s));
  // No signature_algorithms extension: TLS 1.2 defaults (SHA-1 with the suite's key type).
  const ecdsaSig = offer.sigalgs === undefined || offer.sigalgs.some(isEcdsaSigalg);
  const rsaSig = offer.sigalgs === undefined || offer.sigalgs.some(isRsaSigalg);
  return {
    serverName: offer.serverName,
    acceptsEcdsa: ecdsaSuite && ecdsaSig,
    acceptsRsa: rsaSuite && rsaSig,
  };
}

/** The handshake bytes of the first records, or why they cannot be a ClientHello. */
function handshakeBytes(data: Buffer): Buffer | "partial" | "not-tls" {
  const fragments: Buffer[] = [];
  let offset = 0;
  let gathered = 0;
  while (offset + 5 <= data.length && data[offset] === HANDSHAKE) {
    const end = offset + 5 + data.readUInt16BE(offset + 3);
    if (end > data.length) break;
    fragments.push(data.subarray(offset + 5, end));
    gathered += end - offset - 5;
    offset = end;
  }
  if (offset + 5 <= data.length && data[offset] !== HANDSHAKE) return "not-tls";
  const message = Buffer.concat(fragments);
  if (gathered >= 1 && message[0] !== CLIENT_HELLO) return "not-tls";
  if (gathered < 4 || gathered < 4 + message.readUIntBE(1, 3)) return "partial";
  return message;
}

/** Reads a ClientHello from the first bytes of a connection (it may span several records). */
export function readClientHello(data: Buffer): HelloRead {
  if (data.length > 0 && data[0] !== HANDSHAKE) return { state: "not-tls" };
  const message = handshakeBytes(data);
  if (message === "partial" || message === "not-tls") return { state: message };
  try {
    const reader = new Reader(message, 0, message.length);
    reader.u8();
    return { state: "complete", hello: decide(readHelloBody(reader.slice(reader.u24()))) };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    // A malformed hello: let OpenSSL refuse it with a proper alert.
    return {
      state: "complete",
      hello: { serverName: undefined, acceptsEcdsa: true, acceptsRsa: true },
    };
  }
}
