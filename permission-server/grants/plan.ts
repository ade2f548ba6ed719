// What one attempt grants, and the status it reports: pure helpers of the grant service.
import type { GrantRecord, ResolvedPermissionGroup } from "../../core/permission";
import type { JobOutcome, JobProgress } from "./job";
import type { GrantStatus, Phase, PermissionProgress } from "../../core/permission/grant-status";

/** One grant to run: a permission of the group, or the CMDB registration. */
export type Planned = GrantRecord["permissions"][number];

/** The registration's name in status and record. Group permissions are RFC 1123 labels, so no clash. */
export const CMDB_PERMISSION = "cmdb-registration";

export interface CmdbSettings {
  provider: string;
  params: Record<string, unknown>;
}

/** The CMDB registration (first, when the group asks for it and one is configured), then the group's permissions. */
export function planGrants(
  group: ResolvedPermissionGroup,
  cmdb: CmdbSettings | undefined,
): { planned: Planned[]; problem?: string } {
  const permissions: Planned[] = group.permissions.map(p => ({
    name: p.name,
    provider: p.provider,
    params: { ...p.params },
  }));
  if (!group.registerWithCmdb) return { planned: permissions };
  if (!cmdb) {
    return {
      planned: permissions,
      problem:
        "the group asks for CMDB registration (registerWithCmdb) but the server has no BULWARK_CMDB_PROVIDER",
    };
  }
  const registration = {
    name: CMDB_PERMISSION,
    provider: cmdb.provider,
    params: { ...cmdb.params },
  };
  return { planned: [registration, ...permissions] };
}

export interface StatusBase {
  uid: string;
  ip: string;
  attempt: number;
  failures: number;
}

export function startingStatus(base: StatusBase, previousRev: number, now: Date): GrantStatus {
  return {
    phase: "granting",
    ...base,
    rev: previousRev + 1,
    permissions: [],
    updatedAt: now.toISOString(),
  };
}

export function pendingProgress(planned: readonly Planned[]): PermissionProgress[] {
  return planned.map(p => ({ name: p.name, provider: p.provider, state: "pending" }));
}

/** The permission's entry after a progress report; unchanged entries are returned as they were. */
export function applyProgress(
  entry: PermissionProgress,
  progress: JobProgress,
): PermissionProgress {
  const next: PermissionProgress = { name: entry.name, provider: entry.provider, state: "pending" };
  const jobId = progress.state === "pending" ? (progress.jobId ?? entry.jobId) : entry.jobId;
  if (jobId !== undefined) next.jobId = jobId;
  if (progress.reason !== undefined) next.reason = progress.reason;
  return next;
}

export function applyOutcome(entry: PermissionProgress, outcome: JobOutcome): PermissionProgress {
  const base = { name: entry.name, provider: entry.provider };
  switch (outcome.outcome) {
    case "granted":
      return { ...base, state: "granted", jobId: outcome.jobId };
    case "denied":
    case "timeout": {
      const failed: PermissionProgress = { ...base, state: "failed", reason: outcome.reason };
      const jobId = outcome.jobId ?? entry.jobId;
      if (jobId !== undefined) failed.jobId = jobId;
      return failed;
    }
    case "aborted":
      return { ...entry };
  }
}

/** Granting, or waiting while any job waits for an unavailable provider. */
export function runningPhase(waiting: number): Phase {
  return waiting > 0 ? "waiting" : "granting";
}
