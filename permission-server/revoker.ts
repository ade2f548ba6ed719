// Revocation of a grant record (the Pepr finalizer path's POST /v1/revoke, and a pod whose IP
// changed): each permission is revoked at the record's IP, keyed by the record's pod UID, except
// what another live pod at the same IP holds now (IPs are reused while a pod is Terminating: its
// permission must not go with the old pod's). Providers treat "already absent" as success.
import type { V1Pod } from "@kubernetes/client-node";
import { z } from "zod";
import { PERMISSION_GRANT_ANNOTATION } from "../core/names";
import { grantRecordSchema, parseGrantRecord, type GrantRecord } from "../core/permission";
import type { Catalog } from "./catalog";
import type { ProviderHandle } from "./grant-job";
import type { Kube } from "./kube";
import { errorText, type Logger } from "./log";
import type { Metrics } from "./metrics";

/** The body revoke.ts sends: the grant record plus the pod's namespace and name. */
export const revokeRequestSchema = grantRecordSchema.extend({
  namespace: z.string().min(1),
  pod: z.string().min(1),
  grantedAt: z.string().optional(),
});
export type RevokeRequest = z.infer<typeof revokeRequestSchema>;

type Permission = GrantRecord["permissions"][number];

export interface RevokeResult {
  revoked: string[];
  /** Still held by another live pod at the same IP: left in place. */
  kept: { name: string; by: string }[];
  /** Nothing to revoke with: the provider no longer exists. */
  skipped: { name: string; reason: string }[];
  failed: { name: string; reason: string }[];
}

const sameGrant = (a: Permission, b: Permission): boolean =>
  a.provider === b.provider && JSON.stringify(a.params) === JSON.stringify(b.params);

function liveRecord(pod: V1Pod): GrantRecord | undefined {
  const record = parseGrantRecord(pod.metadata?.annotations?.[PERMISSION_GRANT_ANNOTATION]);
  return record.ok ? record.value : undefined;
}

/** "ns/name" of the live pods (other than `uid`) whose grant record holds `permission` at `ip`. */
export function holdersOf(
  pods: readonly V1Pod[],
  uid: string,
  ip: string,
  permission: Permission,
): string[] {
  const holders: string[] = [];
  for (const pod of pods) {
    if (pod.metadata?.uid === uid || pod.metadata?.deletionTimestamp) continue;
    const record = liveRecord(pod);
    if (record?.ip === ip && record.permissions.some(p => sameGrant(p, permission))) {
      holders.push(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
    }
  }
  return holders;
}

export class Revoker {
  constructor(
    private readonly deps: { kube: Kube; catalog: Catalog; log: Logger; metrics: Metrics },
  ) {}

  async revoke(request: RevokeRequest): Promise<RevokeResult> {
    const result: RevokeResult = { revoked: [], kept: [], skipped: [], failed: [] };
    const sameIp = await this.deps.kube.core.listPodForAllNamespaces({
      fieldSelector: `status.podIP=${request.ip}`,
    });
    for (const permission of request.permissions) {
      await this.#revokeOne(request, permission, sameIp.items, result);
    }
    this.deps.log.info("revoked", {
      ns: request.namespace,
      name: request.pod,
      uid: request.uid,
      ip: request.ip,
      revoked: result.revoked,
      kept: result.kept.length,
      skipped: result.skipped.length,
      failed: result.failed.length,
    });
    return result;
  }

  async #revokeOne(
    request: RevokeRequest,
    permission: Permission,
    sameIp: readonly V1Pod[],
    result: RevokeResult,
  ): Promise<void> {
    const count = (outcome: string): void =>
      void this.deps.metrics.revokes.inc({ provider: permission.provider, outcome });
    const holders = holdersOf(sameIp, request.uid, request.ip, permission);
    if (holders.length > 0) {
      result.kept.push({ name: permission.name, by: holders.join(", ") });
      return count("kept");
    }
    try {
      const handle = await this.deps.catalog.providerIfExists(permission.provider);
      if (!handle) {
        result.skipped.push({
          name: permission.name,
          reason: `PermissionProvider ${permission.provider} no longer exists`,
        });
        return count("skipped");
      }
      await revokeCall(handle, {
        podUid: request.uid,
        namespace: request.namespace,
        pod: request.pod,
        ip: request.ip,
        group: request.group,
        params: permission.params,
      });
      result.revoked.push(permission.name);
      count("revoked");
    } catch (error) {
      result.failed.push({ name: permission.name, reason: errorText(error) });
      count("failed");
    }
  }
}

/** One revoke call under the provider's limiter and timeout; an open provider breaker fails fast. */
async function revokeCall(
  handle: ProviderHandle,
  request: Parameters<ProviderHandle["provider"]["revoke"]>[0],
): Promise<void> {
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
