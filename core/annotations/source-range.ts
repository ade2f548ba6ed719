// ingress-nginx's access control by client address: `allowlist-source-range` (and its older name
// `whitelist-source-range`) and `denylist-source-range`, each a comma list of CIDRs or addresses as
// internal/net.ParseIPNets reads them. nginx applies them as `deny <each>; allow <each>; deny all;`:
// a denied address is refused even inside the allowlist, and with an allowlist anything outside
// it is refused. ingress-nginx reads the old name only when the new one is empty or absent; a bad
// entry there makes ingress-nginx deny the whole location, so Bulwark refuses the Ingress instead.
import { z } from "zod";
import { inRanges, type IpRanges } from "../net/ranges";
import type { Address } from "../net/ip";
import { parseFamily, keyOf, type Family } from "./family";
import { annotation, bad, IP_RANGES_EXPECTED, parseIpRanges, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  allowlist: {
    annotation: "allowlist-source-range",
    type: "CIDR list",
    default: "every address",
    doc: 'Only clients in these networks are served, others get 403 ("10.0.0.0/8,2001:db8::/32"; bare addresses allowed). The client is the TCP peer, or behind BULWARK_TRUSTED_PROXIES the X-Forwarded-For address they vouch for.',
  },
  whitelist: {
    annotation: "whitelist-source-range",
    type: "CIDR list",
    default: "every address",
    doc: "The older name of allowlist-source-range, read when that is absent.",
  },
  denylist: {
    annotation: "denylist-source-range",
    type: "CIDR list",
    default: "no address",
    doc: "Clients in these networks get 403, even inside the allowlist.",
  },
} as const;

type Field = keyof typeof fields;

function parseRangeList(raw: string): Parsed<IpRanges> {
  if (raw.trim() === "") {
    return bad(IP_RANGES_EXPECTED, raw, "empty: ingress-nginx denies the location");
  }
  return parseIpRanges(raw);
}

const rangeList = () => annotation(parseRangeList).optional();

export const sourceRangeSchema = z
  .object({
    allowlist: rangeList(),
    whitelist: rangeList(),
    denylist: rangeList(),
  } satisfies Record<Field, z.ZodType>)
  .transform(v => ({
    allow: v.allowlist ?? v.whitelist,
    deny: v.denylist,
    /** Both names set to different lists: the older one is ignored, as in ingress-nginx. */
    shadowedWhitelist:
      v.allowlist !== undefined &&
      v.whitelist !== undefined &&
      v.allowlist.text.join(",") !== v.whitelist.text.join(","),
  }));

export type SourceRangeConfig = z.output<typeof sourceRangeSchema>;

export const sourceRangeFamily: Family<SourceRangeConfig, Field> = {
  name: "source-range",
  fields,
  schema: sourceRangeSchema,
  warnings: value =>
    value.shadowedWhitelist
      ? [
          `annotation "${keyOf(sourceRangeFamily, "whitelist")}" is ignored: "${keyOf(sourceRangeFamily, "allowlist")}" is set and takes precedence`,
        ]
      : [],
};

export function parseSourceRange(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<SourceRangeConfig | undefined> {
  return parseFamily(sourceRangeFamily, annotations);
}

/** nginx's `deny …; allow …; deny all;`: whether the client may reach the route. */
export function sourceAllowed(config: SourceRangeConfig, client: Address): boolean {
  if (config.deny !== undefined && inRanges(config.deny, client)) return false;
  return config.allow === undefined || inRanges(config.allow, client);
}
