// A list of IP networks as ingress-nginx reads a source-range annotation or proxy-real-ip-cidr
// (internal/net.ParseIPNets): comma-separated, each entry trimmed, a CIDR or a bare address, one
// bad entry failing the whole list. Compiled once into per-family lists for matching.
import {
  contains,
  formatNetwork,
  hostNetwork,
  parseCidr,
  parseIp,
  type Address,
  type Network,
} from "./ip";
import { trimGoSpace } from "../trim";

export interface IpRanges {
  /** The networks in Go's spelling, sorted and without duplicates, as ingress-nginx writes them. */
  readonly text: readonly string[];
  readonly v4: readonly Network[];
  readonly v6: readonly Network[];
}

export type RangesParse = { ok: true; ranges: IpRanges } | { ok: false; entry: string };

function parseEntry(entry: string): Network | undefined {
  const network = parseCidr(entry);
  if (network !== undefined) return network;
  const address = parseIp(entry);
  return address === undefined ? undefined : hostNetwork(address);
}

/** The list's networks; on failure, the first entry that is neither a CIDR nor an address. */
export function parseRanges(text: string): RangesParse {
  const byText = new Map<string, Network>();
  for (const raw of text.split(",")) {
    const entry = trimGoSpace(raw);
    const network = parseEntry(entry);
    if (network === undefined) return { ok: false, entry };
    const bare = network.bits === network.base.length * 8 && !entry.includes("/");
    // ingress-nginx keeps a bare address as the address ("1.2.3.4"), a CIDR as a network.
    byText.set(
      bare ? formatNetwork(network).replace(/\/\d+$/, "") : formatNetwork(network),
      network,
    );
  }
  const sorted = [...byText.keys()].sort();
  const networks = sorted.map(key => byText.get(key)!);
  return {
    ok: true,
    ranges: {
      text: sorted,
      v4: networks.filter(n => n.base.length === 4),
      v6: networks.filter(n => n.base.length === 16),
    },
  };
}

/** Whether the address lies in one of the networks of its own family. */
export function inRanges(ranges: IpRanges, address: Address): boolean {
  const networks = address.length === 4 ? ranges.v4 : ranges.v6;
  for (const network of networks) if (contains(network, address)) return true;
  return false;
}

export const NO_RANGES: IpRanges = Object.freeze({ text: [], v4: [], v6: [] });
