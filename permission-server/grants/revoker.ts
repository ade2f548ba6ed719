// Revocation from the ledger (the Pepr finalizer path's POST /v1/revoke, a pod whose IP changed,
// and the sweep of pods that are gone): exactly what the pod UID's PermissionGrant holds is
// revoked, at the IPs it records; what the caller sends only names the pod. A grant another pod's
// ledger holds the same way at the same IP (IPs are reused while a pod is Terminating) is left in
// place, and providers whose grants share state per IP are told what others still hold there.
// Providers treat "already absent" as success.
import { z } from "zod";
import {
  holdersOf,
  heldByOthers,
  withoutEntry,
  type LedgerEntry,
} from "../../core/permission/ledger";
import type { Catalog } from "../providers/catalog";
import type { ProviderHandle } from "./job";
import type { GrantLedger } from "./ledger";
import { errorText, type Logger } from "../../kube/log";
import type { Metrics } from "../metrics";
import type { RevokeRequest as ProviderRevoke } from "../providers/types";

/**
 * The body revoke.ts sends: the pod's namespace, name and UID. Anything else (an older module
 * sent the whole grant record) is ignored: the ledger says what to revoke.
 */
export const revokeRequestSchema = z.object({
  namespace: z.string().min(1),
  pod: z.string().min(1),
  uid: z.string().min(1),
});
export type RevokeRequest = z.infer<typeof revokeRequestSchema>;

export interface RevokeResult {
  revoked: string[];
  /** Still held by another pod's ledger at the same IP: left in place. */
  kept: { name: string; by: string }[];
  /** Nothing to revoke with: the provider no longer exists. */
  skipped: { name: string; reason: string }[];
  failed: { name: string; reason: string }[];
  /** The IPs the ledger held grants at. */
  ips: string[];
}

/** The ledger belongs to another pod than the one the caller named. */
export class NotThisPodError extends Error {}

export class Revoker {
  constructor(
    private readonly deps: { catalog: Catalog; ledger: GrantLedger; log: Logger; metrics: Metrics },
  ) {}

  /**
   * Revokes what the ledger holds for `pod.uid` (at every IP but `exceptIp`), and removes what
   * was revoked or left to another holder from the ledger. Throws NotThisPodError when the UID's
   * ledger names another pod.
   */
  async revoke(pod: RevokeRequest, options: { exceptIp?: string } = {}): Promise<RevokeResult> {
    const result: RevokeResult = { revoked: [], kept: [], skipped: [], failed: [], ips: [] };
    const ledger = await this.deps.ledger.read(pod.uid);
    if (!ledger) return result;
    const owner = ledger.spec.pod;
    if (owner.namespace !== pod.namespace || owner.name !== pod.pod) {
      throw new NotThisPodError(
        `pod UID ${pod.uid} is ${owner.namespace}/${owner.name}'s, not ${pod.namespace}/${pod.pod}'s`,
      );
    }
    const entries = ledger.spec.entries.filter(e => e.ip !== options.exceptIp);
    result.ips = [...new Set(entries.map(e => e.ip))];
    const done: LedgerEntry[] = [];
    for (const entry of entries) {
      if (await this.#revokeOne(ledger.spec.group, { ...owner }, entry, result)) done.push(entry);
    }
    if (done.length > 0) {
      await this.deps.ledger.update({ ...owner, group: ledger.spec.group }, spec =>
        done.reduce(withoutEntry, spec),
      );
    }
    this.deps.log.info("revoked", {
      ns: owner.namespace,
      name: owner.name,
      uid: owner.uid,
      ips: result.ips,
      revoked: result.revoked,
      kept: result.kept.length,
      skipped: result.skipped.length,
      failed: result.failed.length,
    });
    return result;
  }

  /** Whether the entry is done with (revoked, kept by another pod, or its provider gone). */
  async #revokeOne(
    group: string,
    pod: { namespace: string; name: string; uid: string },
    entry: LedgerEntry,
    result: RevokeResult,
  ): Promise<boolean> {
    const count = (outcome: string): void =>
      void this.deps.metrics.revokes.inc({ provider: entry.provider, outcome });
    try {
      const holders = holdersOf(await this.deps.ledger.atIp(entry.ip), pod.uid, entry);
      if (holders.length > 0) {
        result.kept.push({ name: entry.name, by: holders.join(", ") });
        count("kept");
        return true;
      }
      const handle = await this.deps.catalog.providerIfExists(entry.provider);
      if (!handle) {
        const reason = `PermissionProvider ${entry.provider} no longer exists`;
        result.skipped.push({ name: entry.name, reason });
        this.deps.log.warn("nothing to revoke with; the ledger entry is dropped", {
          ns: pod.namespace,
          name: pod.name,
          permission: entry.name,
          ip: entry.ip,
          reason,
        });
        count("skipped");
        return true;
      }
      const { ip, provider, params } = entry;
      await revokeCall(handle, {
        podUid: pod.uid,
        namespace: pod.namespace,
        pod: pod.name,
        ip,
        group,
        params,
        stillHeld: async () =>
          heldByOthers(await this.deps.ledger.atIp(ip), { uid: pod.uid, ip, provider }),
      });
      result.revoked.push(entry.name);
      count("revoked");
      return true;
    } catch (error) {
      result.failed.push({ name: entry.name, reason: errorText(error) });
      count("failed");
      return false;
    }
  }
}

/** One revoke call under the provider's limiter and timeout; an open provider breaker fails fast. */
async function revokeCall(handle: ProviderHandle, request: ProviderRevoke): Promise<void> {
  if (!handle.breaker.tryAcquire()) {
    throw new Error(`provider ${handle.name} is unavailable (breaker ${handle.breaker.state})`);
  }
  const outer = new AbortController();
  try {
    await handle.schedule(
      () =>
        handle.provider.revoke(
          request,
          AbortSignal.any([outer.signal, AbortSignal.timeout(handle.timeoutMs)]),
        ),
      outer.signal,
    );
    handle.breaker.success();
  } catch (error) {
    handle.breaker.failure();
    throw error;
  }
}
