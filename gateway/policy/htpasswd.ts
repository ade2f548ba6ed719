// htpasswd files as nginx's auth_basic_user_file reads them, and the password hashes nginx checks
// (src/core/ngx_crypt.c, and the system's crypt(3) for the rest: libxcrypt on Debian). As in nginx,
// a password is checked by computing its hash with the stored one as the salt and comparing the
// two whole strings; a format this file does not know computes nothing and never matches. Pure:
// the request path never calls `cryptWith` (bcrypt and SHA-crypt cost real time), the verifier's
// worker thread does.
import { createHash, timingSafeEqual, type BinaryLike } from "node:crypto";
import bcrypt from "bcryptjs";

/** user → stored hash, the first line of each user, as nginx takes the first match. */
export type UserFile = ReadonlyMap<string, string>;

/**
 * Parses an htpasswd file as nginx scans it: a line starting with "#" or CR is skipped, the user
 * is everything before the first ":", the hash ends at the next LF, CR or ":" (what follows is a
 * comment). Text is latin1 so every byte stands for itself, as user names compare byte by byte.
 */
export function parseUserFile(text: string): UserFile {
  const users = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#") || line.startsWith("\r")) continue;
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const user = line.slice(0, colon);
    if (users.has(user)) continue;
    const rest = line.slice(colon + 1);
    const end = rest.search(/[\r:]/);
    users.set(user, cString(end < 0 ? rest : rest.slice(0, end)));
  }
  return users;
}

/**
 * auth-map: ingress-nginx writes each key as "user:value\n" into the file nginx reads (Go's map
 * order; sorted here so the result does not depend on it), so a value is read as a file line is.
 */
export function authMapFile(data: Readonly<Record<string, string>>): string {
  return Object.keys(data)
    .sort()
    .map(user => `${user}:${data[user] ?? ""}\n`)
    .join("");
}

/** C strings end at NUL: nginx passes the password and the stored hash to crypt as such. */
function cString(text: string): string {
  const nul = text.indexOf("\0");
  return nul < 0 ? text : text.slice(0, nul);
}

/** Credentials from an Authorization header, as ngx_http_auth_basic_user reads them. */
export interface Credentials {
  /** latin1: one character per byte. */
  user: string;
  password: Buffer;
}

/**
 * "Basic" (any case), one space, then any spaces and base64 of "user:password" with a non-empty
 * user; undefined (no credentials: 401) for anything else, as nginx declines it.
 */
export function parseBasicCredentials(header: string | undefined): Credentials | undefined {
  if (header === undefined || header.length < 6) return undefined;
  if (header.slice(0, 6).toLowerCase() !== "basic ") return undefined;
  const encoded = header.slice(6).replace(/^ +/, "");
  const decoded = encoded === "" ? undefined : decodeNginxBase64(encoded);
  if (decoded === undefined) return undefined;
  const colon = decoded.indexOf(0x3a);
  if (colon <= 0) return undefined;
  return {
    user: decoded.toString("latin1", 0, colon),
    password: decoded.subarray(colon + 1),
  };
}

const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** crypt's base64: `count` characters of the 24-bit value, low bits first. */
function to64(value: number, count: number): string {
  let out = "";
  let v = value;
  for (let i = 0; i < count; i++) {
    out += ITOA64[v & 0x3f];
    v >>>= 6;
  }
  return out;
}

const md5 = (...parts: BinaryLike[]): Buffer => digest("md5", parts);
function digest(algorithm: string, parts: readonly BinaryLike[]): Buffer {
  const hash = createHash(algorithm);
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** Poul-Henning Kamp's MD5 crypt, with magic "$1$" (crypt) or "$apr1$" (Apache). */
function md5Crypt(key: Buffer, stored: string, magic: string): string {
  const salt = Buffer.from(saltOf(stored.slice(magic.length), 8), "latin1");
  const alternate = md5(key, salt, key);
  const parts: Buffer[] = [key, Buffer.from(magic), salt];
  for (let n = key.length; n > 0; n -= 16) parts.push(alternate.subarray(0, Math.min(n, 16)));
  for (let i = key.length; i > 0; i >>>= 1)
    parts.push(i & 1 ? Buffer.alloc(1) : key.subarray(0, 1));
  let final = md5(...parts);
  for (let i = 0; i < 1000; i++) {
    const round: Buffer[] = [i & 1 ? key : final];
    if (i % 3) round.push(salt);
    if (i % 7) round.push(key);
    round.push(i & 1 ? final : key);
    final = md5(...round);
  }
  const f = final;
  const text =
    to64((f[0]! << 16) | (f[6]! << 8) | f[12]!, 4) +
    to64((f[1]! << 16) | (f[7]! << 8) | f[13]!, 4) +
    to64((f[2]! << 16) | (f[8]! << 8) | f[14]!, 4) +
    to64((f[3]! << 16) | (f[9]! << 8) | f[15]!, 4) +
    to64((f[4]! << 16) | (f[10]! << 8) | f[5]!, 4) +
    to64(f[11]!, 2);
  return `${magic}${salt.toString("latin1")}$${text}`;
}

/** The salt: at most `max` characters, up to the first "$". */
function saltOf(rest: string, max: number): string {
  const dollar = rest.indexOf("$");
  return (dollar < 0 ? rest : rest.slice(0, dollar)).slice(0, max);
}

function sha1Base64(...parts: BinaryLike[]): string {
  return digest("sha1", parts).toString("base64");
}

/** {SSHA}: base64(SHA1(password salt) salt), the salt after the first 20 decoded bytes. */
function sshaCrypt(key: Buffer, stored: string): string {
  const encoded = stored.slice("{SSHA}".length);
  const decoded = decodeNginxBase64(encoded);
  const salt =
    decoded !== undefined && decoded.length >= 20 ? decoded.subarray(20) : Buffer.alloc(0);
  const hash = digest("sha1", [key, salt]);
  return `{SSHA}${Buffer.concat([hash, salt]).toString("base64")}`;
}

/** ngx_decode_base64: up to the first "=" (what follows is ignored); undefined where nginx fails. */
function decodeNginxBase64(text: string): Buffer | undefined {
  const equals = text.indexOf("=");
  const body = equals < 0 ? text : text.slice(0, equals);
  if (!/^[A-Za-z0-9+/]*$/.test(body) || body.length % 4 === 1) return undefined;
  return Buffer.from(body, "base64");
}

const CRYPT_SALT = /^[./0-9A-Za-z]*$/;

// SHA-crypt's rounds (Drepper's specification); above MAX_SHA_ROUNDS a hash never matches, so one
// Secret cannot make the verifier spend minutes on a try.
const SHA_DEFAULT_ROUNDS = 5000;
const SHA_MIN_ROUNDS = 1000;
export const MAX_SHA_ROUNDS = 1_000_000;

// The order of the digest's bytes in the output, three at a time (Drepper's specification).
const SHA256_ORDER = [
  [0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14],
  [15, 25, 5], [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29],
] as const; // prettier-ignore
const SHA512_ORDER = [
  [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48],
  [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10], [53, 11, 32], [12, 33, 54], [34, 55, 13],
  [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41],
] as const; // prettier-ignore

interface ShaVariant {
  magic: "$5$" | "$6$";
  algorithm: "sha256" | "sha512";
  size: number;
}
const SHA256: ShaVariant = { magic: "$5$", algorithm: "sha256", size: 32 };
const SHA512: ShaVariant = { magic: "$6$", algorithm: "sha512", size: 64 };

/** "rounds=N$" at the start of the setting: N, or undefined without it; NaN when malformed. */
function roundsOf(rest: string): { rounds: number | undefined; rest: string } {
  const match = /^rounds=([0-9]+)\$/.exec(rest);
  if (!rest.startsWith("rounds=")) return { rounds: undefined, rest };
  if (match === null || match[1]!.startsWith("0")) return { rounds: Number.NaN, rest };
  return { rounds: Number(match[1]), rest: rest.slice(match[0].length) };
}

/** `length` bytes of `block` repeated. */
function repeated(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; at += block.length)
    block.copy(out, at, 0, Math.min(block.length, length - at));
  return out;
}

interface ShaSetting {
  /** As written; undefined: the default, and no "rounds=" in the output. */
  asked: number | undefined;
  rounds: number;
  salt: string;
}

/** The rounds and salt of a $5$/$6$ hash; undefined when malformed or over the cap. */
function shaSetting(stored: string, variant: ShaVariant): ShaSetting | undefined {
  const { rounds: asked, rest } = roundsOf(stored.slice(variant.magic.length));
  if (Number.isNaN(asked)) return undefined;
  const rounds = Math.min(Math.max(asked ?? SHA_DEFAULT_ROUNDS, SHA_MIN_ROUNDS), 999_999_999);
  const salt = saltOf(rest, 16);
  if (rounds > MAX_SHA_ROUNDS || !CRYPT_SALT.test(salt)) return undefined;
  return { asked, rounds, salt };
}

/** SHA-256/512 crypt ($5$, $6$), Ulrich Drepper's specification as glibc and libxcrypt run it. */
function shaCrypt(key: Buffer, stored: string, variant: ShaVariant): string | undefined {
  const setting = shaSetting(stored, variant);
  if (setting === undefined) return undefined;
  const salt = Buffer.from(setting.salt, "latin1");
  const h = (...parts: BinaryLike[]) => digest(variant.algorithm, parts);
  const alternate = h(key, salt, key);
  const parts: Buffer[] = [key, salt, repeated(alternate, key.length)];
  for (let i = key.length; i > 0; i >>>= 1) parts.push(i & 1 ? alternate : key);
  let c = h(...parts);
  const p = repeated(h(...Array<Buffer>(key.length).fill(key)), key.length);
  const s = repeated(h(...Array<Buffer>(16 + c[0]!).fill(salt)), salt.length);
  for (let i = 0; i < setting.rounds; i++) {
    const round: Buffer[] = [i & 1 ? p : c];
    if (i % 3) round.push(s);
    if (i % 7) round.push(p);
    round.push(i & 1 ? c : p);
    c = h(...round);
  }
  const roundsText = setting.asked === undefined ? "" : `rounds=${setting.rounds}$`;
  return `${variant.magic}${roundsText}${setting.salt}$${shaText(c, variant)}`;
}

/** The digest in crypt's base64, its bytes in the specification's order. */
function shaText(c: Buffer, variant: ShaVariant): string {
  const order = variant.size === 32 ? SHA256_ORDER : SHA512_ORDER;
  const text = order.map(([a, b, d]) => to64((c[a]! << 16) | (c[b]! << 8) | c[d]!, 4)).join("");
  return text + (variant.size === 32 ? to64((c[31]! << 8) | c[30]!, 3) : to64(c[63]!, 2));
}

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
/** Above this cost a bcrypt hash never matches: cost 16 takes seconds a try in JavaScript. */
export const MAX_BCRYPT_COST = 15;

function bcryptCrypt(key: Buffer, stored: string): string | undefined {
  const match = BCRYPT.exec(stored);
  if (match === null) return undefined;
  const cost = Number(match[1]);
  if (cost < 4 || cost > MAX_BCRYPT_COST) return undefined;
  // bcryptjs takes text and hashes its UTF-8: a password that is not UTF-8 cannot be given to it.
  const password = key.toString("utf8");
  if (!Buffer.from(password, "utf8").equals(key)) return undefined;
  return bcrypt.hashSync(password, stored.slice(0, 29));
}

/**
 * The hash of `password` with `stored` as the salt, in `stored`'s format (as ngx_crypt and
 * crypt(3) compute it); undefined for a format nginx on Debian would not match here.
 */
export function cryptWith(password: Buffer, stored: string): string | undefined {
  const key = cBytes(password);
  if (stored.startsWith("$apr1$")) return md5Crypt(key, stored, "$apr1$");
  if (stored.startsWith("{PLAIN}")) return `{PLAIN}${key.toString("latin1")}`;
  if (stored.startsWith("{SSHA}")) return sshaCrypt(key, stored);
  if (stored.startsWith("{SHA}")) return `{SHA}${sha1Base64(key)}`;
  if (stored.startsWith("$1$")) {
    return CRYPT_SALT.test(saltOf(stored.slice(3), 8)) ? md5Crypt(key, stored, "$1$") : undefined;
  }
  if (stored.startsWith("$5$")) return shaCrypt(key, stored, SHA256);
  if (stored.startsWith("$6$")) return shaCrypt(key, stored, SHA512);
  if (stored.startsWith("$2")) return bcryptCrypt(key, stored);
  return undefined;
}

function cBytes(password: Buffer): Buffer {
  const nul = password.indexOf(0);
  return nul < 0 ? password : password.subarray(0, nul);
}

/** Whether `password` matches `stored` (a constant-time comparison of the two hashes). */
export function passwordMatches(password: Buffer, stored: string): boolean {
  let computed: string | undefined;
  try {
    computed = cryptWith(password, stored);
  } catch {
    return false;
  }
  if (computed === undefined) return false;
  const a = Buffer.from(computed, "latin1");
  const b = Buffer.from(stored, "latin1");
  return a.length === b.length && timingSafeEqual(a, b);
}
