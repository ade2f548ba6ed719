// Who the client is, for source ranges, X-Real-IP and the access log: the TCP peer, or — when the
// peer is one of BULWARK_TRUSTED_PROXIES — the address those proxies vouch for in
// X-Forwarded-For (core/net/forwarded.ts). The peer is parsed once per connection; the header is
// read only when the peer is trusted, so a direct client costs nothing per request.
import { forwardedClient } from "../../core/net/forwarded";
import { formatIp, parseIp, type Address } from "../../core/net/ip";
import { inRanges, NO_RANGES, parseRanges, type IpRanges } from "../../core/net/ranges";

/** The TCP peer of one connection. */
export interface Peer {
  readonly address: Address;
  /** As it goes into X-Forwarded-For and X-Real-IP (IPv4-mapped IPv6 unwrapped). */
  readonly text: string;
  /** Whether X-Forwarded-For from it is believed. */
  readonly trusted: boolean;
}

const UNSPECIFIED = new Uint8Array(16);

export class ClientAddresses {
  private readonly trusted: IpRanges;

  /** `trusted`: the networks of BULWARK_TRUSTED_PROXIES, already validated by the settings. */
  constructor(trusted: readonly string[]) {
    const parsed = parseRanges(trusted.join(","));
    this.trusted = trusted.length > 0 && parsed.ok ? parsed.ranges : NO_RANGES;
  }

  /** The peer of a socket (Node's remoteAddress; undefined once the socket is gone). */
  peer(remoteAddress: string | undefined): Peer {
    const address =
      (remoteAddress === undefined ? undefined : parseIp(remoteAddress)) ?? UNSPECIFIED;
    const text = formatIp(address);
    return { address, text, trusted: inRanges(this.trusted, address) };
  }

  /** The client of one request: the peer, or the right-most untrusted forwarded address. */
  client(peer: Peer, forwardedFor: string | undefined): Address {
    return peer.trusted ? forwardedClient(peer.address, forwardedFor, this.trusted) : peer.address;
  }
}
