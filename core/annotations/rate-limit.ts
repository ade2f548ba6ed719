// ingress-nginx's rate and connection limits per client address (internal/ingress/annotations/
// ratelimit): `limit-rps` and `limit-rpm` become `limit_req zone=… burst=<limit × limit-burst-
// multiplier> nodelay;` (multiplier 5 by default), `limit-connections` `limit_conn … <n>;`, and
// clients in `limit-allowlist` (older name `limit-whitelist`, read when the new one is absent) are
// not limited. 0 is no limit, as in ingress-nginx; the zones belong to the Ingress, so all of its
// paths share one count per client. `limit-rate` and `limit-rate-after` (kilobytes, rendered
// `limit_rate <n>k; limit_rate_after <n>k;`) pace each response to the client instead, allowlist
// or not. A bad value, which ingress-nginx would answer by serving the location without limits,
// is refused here.
import { z } from "zod";
import { inRanges, type IpRanges } from "../net/ranges";
import type { Address } from "../net/ip";
import { parseFamily, keyOf, type Family } from "./family";
import { annotation, good, parseIntIn, parseIpRanges, type Parsed } from "./validators";
import type { Result } from "../result";

export const DEFAULT_BURST_MULTIPLIER = 5;
const MAX_LIMIT = 1_000_000;
/** nginx's `k` suffix. */
const KILOBYTE = 1024;
/** 1 TiB a second or after: a bigger value is a typo, not a limit. */
const MAX_KILOBYTES = 1024 ** 3;

const fields = {
  rps: {
    annotation: "limit-rps",
    type: "integer (requests a second)",
    default: "0 (no limit)",
    doc: "Requests a second per client address across the Ingress's paths; a burst of rate × limit-burst-multiplier is served at once (nginx limit_req … nodelay), the rest get BULWARK_LIMIT_STATUS (503).",
  },
  rpm: {
    annotation: "limit-rpm",
    type: "integer (requests a minute)",
    default: "0 (no limit)",
    doc: "Requests a minute per client address, as limit-rps; both may be set and both apply.",
  },
  burstMultiplier: {
    annotation: "limit-burst-multiplier",
    type: "integer",
    default: String(DEFAULT_BURST_MULTIPLIER),
    doc: "The burst of limit-rps and limit-rpm as a multiple of the rate.",
  },
  connections: {
    annotation: "limit-connections",
    type: "integer",
    default: "0 (no limit)",
    doc: "Requests in progress at once per client address (nginx limit_conn); over it, BULWARK_LIMIT_STATUS.",
  },
  rate: {
    annotation: "limit-rate",
    type: "integer (kilobytes a second)",
    default: "0 (no limit)",
    doc: "Pace each response body to the client at this many KiB a second (nginx limit_rate, per request); the backend is read no faster, so memory stays bounded. Applies to allowlisted clients too.",
  },
  rateAfter: {
    annotation: "limit-rate-after",
    type: "integer (kilobytes)",
    default: "0",
    doc: "The first KiB of each response that go out unpaced before limit-rate applies (nginx limit_rate_after).",
  },
  allowlist: {
    annotation: "limit-allowlist",
    type: "CIDR list",
    default: "no address",
    doc: 'Clients in these networks are not limited ("10.0.0.0/8,192.168.1.7").',
  },
  whitelist: {
    annotation: "limit-whitelist",
    type: "CIDR list",
    default: "no address",
    doc: "The older name of limit-allowlist, read when that is absent.",
  },
} as const;

type Field = keyof typeof fields;

function parseRangeList(raw: string): Parsed<IpRanges | undefined> {
  return raw === "" ? good(undefined) : parseIpRanges(raw);
}

const count = () => annotation(raw => parseIntIn(raw, 0, MAX_LIMIT)).optional();
const kilobytes = () => annotation(raw => parseIntIn(raw, 0, MAX_KILOBYTES)).optional();
const rangeList = () => annotation(parseRangeList).optional();

export const rateLimitSchema = z
  .object({
    rps: count(),
    rpm: count(),
    burstMultiplier: count(),
    connections: count(),
    rate: kilobytes(),
    rateAfter: kilobytes(),
    allowlist: rangeList(),
    whitelist: rangeList(),
  } satisfies Record<Field, z.ZodType>)
  .transform(v => ({
    rps: v.rps ?? 0,
    rpm: v.rpm ?? 0,
    burstMultiplier: v.burstMultiplier ?? DEFAULT_BURST_MULTIPLIER,
    connections: v.connections ?? 0,
    allow: v.allowlist ?? v.whitelist,
    bandwidth: bandwidthOf(v.rate ?? 0, v.rateAfter ?? 0),
  }));

/** How each response is paced (limit-rate), in bytes; undefined when it is not. */
export interface Bandwidth {
  readonly bytesPerSecond: number;
  /** Bytes of each response sent before the pace applies. */
  readonly after: number;
}

function bandwidthOf(rate: number, after: number): Bandwidth | undefined {
  return rate > 0 ? { bytesPerSecond: rate * KILOBYTE, after: after * KILOBYTE } : undefined;
}

export type RateLimitConfig = z.output<typeof rateLimitSchema>;

/** Whether any limit applies (ingress-nginx renders none when all three are 0). */
export function limitsAnything(config: RateLimitConfig): boolean {
  return config.rps > 0 || config.rpm > 0 || config.connections > 0;
}

export const rateLimitFamily: Family<RateLimitConfig, Field> = {
  name: "rate-limit",
  fields,
  schema: rateLimitSchema,
  warnings: (value, present) => {
    const out: string[] = [];
    if (present.has("allowlist") && present.has("whitelist")) {
      out.push(
        `annotation "${keyOf(rateLimitFamily, "whitelist")}" is ignored: "${keyOf(rateLimitFamily, "allowlist")}" is set and takes precedence`,
      );
    }
    if (!limitsAnything(value) && value.bandwidth === undefined) {
      out.push(
        `the rate-limit annotations have no effect: "${keyOf(rateLimitFamily, "rps")}", "${keyOf(rateLimitFamily, "rpm")}", "${keyOf(rateLimitFamily, "connections")}" and "${keyOf(rateLimitFamily, "rate")}" are all absent or 0`,
      );
    } else if (present.has("rateAfter") && value.bandwidth === undefined) {
      out.push(
        `annotation "${keyOf(rateLimitFamily, "rateAfter")}" has no effect without "${keyOf(rateLimitFamily, "rate")}"`,
      );
    }
    return out;
  },
};

export function parseRateLimit(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RateLimitConfig | undefined> {
  return parseFamily(rateLimitFamily, annotations);
}

/** nginx's `geo` map to an empty key: an allowlisted client is counted by no zone. */
export function limitExempt(config: RateLimitConfig, client: Address): boolean {
  return config.allow !== undefined && inRanges(config.allow, client);
}
