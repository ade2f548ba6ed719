// IP addresses and networks as ingress-nginx reads them (Go's net.ParseIP and net.ParseCIDR, built
// on netip.ParseAddr) and as nginx's allow/deny and realip modules match them: an IPv4 client is
// compared with IPv4 networks only, an IPv6 client with IPv6 networks only, and an IPv4-mapped
// IPv6 address (::ffff:a.b.c.d, what a dual-stack socket reports) is the IPv4 address it carries.
// core/net/ip.differential.test.ts checks the parsers against Go itself.

/** An address: 4 bytes (IPv4, mapped ones included) or 16 (IPv6). */
export type Address = Uint8Array;

/** A network: the address with its host bits cleared, and the prefix length. */
export interface Network {
  readonly base: Address;
  readonly bits: number;
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

function isV4Mapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && V4_MAPPED_PREFIX.every((b, i) => bytes[i] === b);
}

/** The 4-byte form of an IPv4-mapped address; others unchanged. */
function unmap(bytes: Uint8Array): Address {
  return isV4Mapped(bytes) ? bytes.slice(12) : bytes;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** Dotted decimal, four fields of 0..255 without leading zeros (netip's parseIPv4). */
function parseV4(text: string): Uint8Array | undefined {
  const fields = text.split(".");
  if (fields.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const field = fields[i]!;
    if (field.length === 0 || field.length > 3 || (field.length > 1 && field[0] === "0")) {
      return undefined;
    }
    for (let j = 0; j < field.length; j++) if (!isDigit(field.charCodeAt(j))) return undefined;
    const value = Number(field);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

const HEX_FIELD = /^[0-9a-fA-F]{1,4}$/;

/** Colon-separated hex fields, possibly with an embedded IPv4 tail; undefined when invalid. */
function parseGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i === parts.length - 1 && part.includes(".")) {
      const v4 = parseV4(part);
      if (v4 === undefined) return undefined;
      groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    } else if (HEX_FIELD.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}

/** The 16 bytes of the groups before and after "::" (none: `tail` undefined), when they fit. */
function expand(head: number[], tail: number[] | undefined): Uint8Array | undefined {
  const missing = 8 - head.length - (tail?.length ?? 0);
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups =
    tail === undefined ? head : [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** RFC 4291 text (netip's parseIPv6), without a zone: net.ParseIP and ParseCIDR refuse zones. */
function parseV6(text: string): Uint8Array | undefined {
  const ellipsis = text.indexOf("::");
  if (ellipsis < 0) {
    const groups = parseGroups(text);
    return groups === undefined ? undefined : expand(groups, undefined);
  }
  if (text.indexOf("::", ellipsis + 1) >= 0) return undefined;
  const before = text.slice(0, ellipsis);
  // An embedded IPv4 address may only end the address.
  if (before.includes(".")) return undefined;
  const head = parseGroups(before);
  const tail = parseGroups(text.slice(ellipsis + 2));
  return head === undefined || tail === undefined ? undefined : expand(head, tail);
}

/**
 * Go's net.ParseIP: IPv4 dotted decimal or IPv6 text (which the first '.' or ':' decides);
 * undefined for anything else. IPv4-mapped IPv6 addresses come back as their 4 bytes.
 */
export function parseIp(text: string): Address | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ".") return parseV4(text);
    if (c === ":") {
      const bytes = parseV6(text);
      return bytes === undefined ? undefined : unmap(bytes);
    }
    if (c === "%") return undefined;
  }
  return undefined;
}

function maskTo(bytes: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/**
 * Go's net.ParseCIDR: "address/bits", bits decimal (leading zeros allowed) up to the address's
 * length — 128 for an IPv4-mapped IPv6 address, whose network is then IPv4 when what the mask
 * keeps is still mapped (Go's IPNet.String and Contains treat it so). Host bits are cleared.
 */
export function parseCidr(text: string): Network | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const mask = text.slice(slash + 1);
  if (!/^[0-9]+$/.test(mask)) return undefined;
  const bits = Number(mask);
  const hasColon = /^[^.%]*:/.test(address);
  const raw = hasColon ? parseV6(address) : parseIp(address);
  if (raw === undefined || bits > raw.length * 8) return undefined;
  const base = maskTo(raw, bits);
  if (isV4Mapped(base) && bits >= 96) return { base: base.slice(12), bits: bits - 96 };
  return { base, bits };
}

/** Whether the address lies in the network (families never mix, as in nginx and Go). */
export function contains(network: Network, address: Address): boolean {
  if (network.base.length !== address.length) return false;
  let bits = network.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[i]! & mask) !== network.base[i]) return false;
  }
  return true;
}

/** Go's IP.String: dotted decimal, or RFC 5952 (lower case, the longest run of zeros as "::"). */
export function formatIp(address: Address): string {
  if (address.length === 4) return address.join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((address[i]! << 8) | address[i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (list: number[]): string => list.map(g => g.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** Go's IPNet.String: "address/bits". */
export function formatNetwork(network: Network): string {
  return `${formatIp(network.base)}/${network.bits}`;
}

/** A bare address as the network of just itself (nginx's `allow 1.2.3.4;`). */
export function hostNetwork(address: Address): Network {
  return { base: address, bits: address.length * 8 };
}

/** A socket's remote address as Node reports it ("::ffff:1.2.3.4" on dual-stack sockets). */
export function socketAddress(text: string | undefined): Address | undefined {
  return text === undefined ? undefined : parseIp(text);
}
