// The grant ledger: what the permission server has granted (or is granting) to each pod, one
// PermissionGrant object per pod UID in the server's own namespace, which only the server may
// write. Revocation, the orphan sweep and `bulwark permission` read it; the pod's grant
// annotation is a mirror for people, never the truth (a tenant who may patch the pod can edit it).
// An entry is written before the provider is called, so a deletion mid-grant revokes it too.
import { z } from "zod";
import { canonicalJson } from "../checksum/canonical-json";
import { PERMISSION_PREFIX } from "../names";
import { fail, ok, type Result } from "../result";
import { issueErrors } from "./field-errors";

const entrySchema = z.object({
  /** The pod IP the permission was granted to. */
  ip: z.union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address" }),
  name: z.string().min(1),
  provider: z.string().min(1),
  params: z.record(z.string(), z.unknown()),
  /** Set when the provider said granted; absent while the grant is in flight. */
  grantedAt: z.iso.datetime({ offset: true }).optional(),
});
export type LedgerEntry = z.infer<typeof entrySchema>;

export const ledgerSpecSchema = z.object({
  pod: z.object({
    namespace: z.string().min(1),
    name: z.string().min(1),
    uid: z.string().min(1),
  }),
  group: z.string().min(1),
  entries: z.array(entrySchema),
});
export type LedgerSpec = z.infer<typeof ledgerSpecSchema>;

/** A pod's ledger as read, with the resourceVersion to write it back with. */
export interface Ledger {
  spec: LedgerSpec;
  resourceVersion?: string;
}

export function parseLedgerSpec(spec: unknown): Result<LedgerSpec> {
  const parsed = ledgerSpecSchema.safeParse(spec);
  return parsed.success ? ok(parsed.data) : fail(issueErrors("spec", parsed.error.issues));
}

/** An IPv6 address as its eight 4-digit groups, so every spelling of it reads the same. */
function expandIpv6(ip: string): string[] {
  // The URL parser writes the canonical compressed form, with any dotted quad as two groups.
  const compressed = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const [head = "", tail] = compressed.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map(group => group.padStart(4, "0"));
}

/**
 * The label every ledger object carries for each IP it holds grants at, so "who else holds
 * something at this IP" is one label-selector list. Label names allow no ':', so an IPv6 address
 * is written as its eight groups joined by '-' behind a `v6-` prefix (`::1` →
 * `v6-0000-…-0001`); IPv4 keeps its dots.
 */
export function ledgerIpLabel(ip: string): string {
  const name = ip.includes(":") ? `v6-${expandIpv6(ip).join("-")}` : ip;
  return `ip.${PERMISSION_PREFIX}${name}`;
}

/** The labels of a ledger: one per IP it holds. */
export function ledgerLabels(spec: LedgerSpec): Record<string, string> {
  return Object.fromEntries(spec.entries.map(e => [ledgerIpLabel(e.ip), ""]));
}

type Grant = Pick<LedgerEntry, "ip" | "name" | "provider" | "params">;

/**
 * Same backend grant: the same provider asked the same thing for the same IP. Params compare as
 * canonical JSON: the API server stores objects with their keys sorted.
 */
export function sameGrant(a: Grant, b: Grant): boolean {
  return (
    a.ip === b.ip &&
    a.provider === b.provider &&
    canonicalJson(a.params) === canonicalJson(b.params)
  );
}

const sameEntry = (a: Grant, b: Grant): boolean => a.name === b.name && sameGrant(a, b);

/** The ledger with `grants` at `ip` recorded as in flight (entries already there are kept). */
export function withIntent(spec: LedgerSpec, grants: readonly Grant[]): LedgerSpec {
  const added = grants
    .filter(g => !spec.entries.some(e => sameEntry(e, g)))
    .map(({ ip, name, provider, params }) => ({ ip, name, provider, params }));
  return { ...spec, entries: [...spec.entries, ...added] };
}

/** The ledger with `grants` marked granted at `at`. */
export function withGranted(spec: LedgerSpec, grants: readonly Grant[], at: Date): LedgerSpec {
  const grantedAt = at.toISOString();
  const entries = spec.entries.map(e =>
    grants.some(g => sameEntry(e, g)) && !e.grantedAt ? { ...e, grantedAt } : e,
  );
  return { ...spec, entries };
}

/** The ledger without `entry` (revoked, or left to another pod that holds the same grant). */
export function withoutEntry(spec: LedgerSpec, entry: Grant): LedgerSpec {
  return { ...spec, entries: spec.entries.filter(e => !sameEntry(e, entry)) };
}

/**
 * What other pods' ledgers hold at `ip` through `provider`: the params a provider must leave in
 * place when it revokes one pod's grant (an IP reused while the old pod was Terminating).
 */
export function heldByOthers(
  ledgers: readonly LedgerSpec[],
  except: { uid: string; ip: string; provider: string },
): Record<string, unknown>[] {
  return ledgers
    .filter(l => l.pod.uid !== except.uid)
    .flatMap(l => l.entries)
    .filter(e => e.ip === except.ip && e.provider === except.provider)
    .map(e => e.params);
}

/** "ns/name" of the other pods whose ledger holds exactly `grant`. */
export function holdersOf(ledgers: readonly LedgerSpec[], uid: string, grant: Grant): string[] {
  return ledgers
    .filter(l => l.pod.uid !== uid && l.entries.some(e => sameGrant(e, grant)))
    .map(l => `${l.pod.namespace}/${l.pod.name}`);
}
