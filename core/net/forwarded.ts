// The client's address behind trusted proxies, as nginx's realip module finds it with
// `real_ip_header X-Forwarded-For; real_ip_recursive on; set_real_ip_from <trusted>` (what
// ingress-nginx configures with use-forwarded-headers and proxy-real-ip-cidr). Starting from the TCP
// peer: while the current address is trusted, the next X-Forwarded-For entry from the right
// replaces it; the walk stops at an untrusted address, at an entry that is not an address, or when
// the list runs out. Only trusted proxies write to the right of the first untrusted address, so
// nothing a client writes can move the answer past its own address.
// core/net/forwarded.nginx.test.ts checks this against nginx itself.
import { parseIp, type Address } from "./ip";
import { inRanges, type IpRanges } from "./ranges";

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** nginx's ngx_inet_addr: four dot-separated decimal octets ≤ 255, leading zeros allowed. */
function nginxV4(text: string): Address | undefined {
  const fields = text.split(".");
  if (fields.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const field = fields[i]!;
    let octet = 0;
    for (let j = 0; j < field.length; j++) {
      if (!isDigit(field.charCodeAt(j))) return undefined;
      octet = octet * 10 + field.charCodeAt(j) - 48;
      if (octet > 255) return undefined;
    }
    bytes[i] = octet;
  }
  // INADDR_NONE doubles as ngx_inet_addr's error value, so nginx never reads this address.
  return bytes.every(b => b === 255) ? undefined : bytes;
}

function nginxAddress(text: string): Address | undefined {
  return nginxV4(text) ?? (text.includes(":") ? parseIp(text) : undefined);
}

function isPort(text: string): boolean {
  if (!/^[0-9]+$/.test(text)) return false;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/**
 * nginx's ngx_parse_addr_port: an address, "address:port" or "[v6]:port". A bracketed address
 * without a port is not one before nginx 1.27.3 (ingress-nginx's OpenResty is 1.25, Debian's 1.22).
 */
export function forwardedAddress(token: string): Address | undefined {
  const plain = nginxAddress(token);
  if (plain !== undefined) return plain;
  if (token.startsWith("[")) {
    const close = token.indexOf("]");
    if (close < 0 || token[close + 1] !== ":" || !isPort(token.slice(close + 2))) return undefined;
    return nginxAddress(token.slice(1, close));
  }
  const colon = token.indexOf(":");
  if (colon < 0 || !isPort(token.slice(colon + 1))) return undefined;
  return nginxAddress(token.slice(0, colon));
}

/** The entries of X-Forwarded-For values (several header lines joined with ", "), left to right. */
function entries(forwardedFor: string): string[] {
  return forwardedFor.split(/[ ,]+/).filter(entry => entry !== "");
}

/**
 * The client: the peer itself unless it is trusted, then the right-most entry of X-Forwarded-For
 * that is not trusted (or the last one read before the list ran out or held a non-address).
 */
export function forwardedClient(
  peer: Address,
  forwardedFor: string | undefined,
  trusted: IpRanges,
): Address {
  if (forwardedFor === undefined || !inRanges(trusted, peer)) return peer;
  const list = entries(forwardedFor);
  let client = peer;
  for (let i = list.length - 1; i >= 0 && inRanges(trusted, client); i--) {
    const next = forwardedAddress(list[i]!);
    if (next === undefined) break;
    client = next;
  }
  return client;
}
