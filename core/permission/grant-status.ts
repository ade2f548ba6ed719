// The pod's permission.bulwark.dev/status annotation: what the permission server is doing about
// the pod's grants, per permission, and why. The init client decides from it alone; `kubectl get
// pod -o yaml` shows it. Injection writes the plain word "pending" before the server has written
// anything, which reads as "nothing yet".
import { z } from "zod";

export const PERMISSION_STATES = ["pending", "granted", "failed"] as const;

/**
 * - `pending`: asked for, not started yet
 * - `granting`: an attempt runs
 * - `waiting`: an attempt waits for a provider whose breaker is open (not counted against the pod)
 * - `backoff`: the last attempt failed; the next runs at `retryAt`
 * - `granted`: every permission is granted to `ip`
 * - `blocked`: the pod's breaker is open: the init container gives up (its restart shows the
 *   failure); one more attempt runs at `retryAt` (the backoff since the last failure), or at once
 *   after a reset, and its success grants the pod
 */
export const PHASES = ["pending", "granting", "waiting", "backoff", "granted", "blocked"] as const;
export type Phase = (typeof PHASES)[number];

export const permissionProgressSchema = z.object({
  name: z.string(),
  provider: z.string(),
  state: z.enum(PERMISSION_STATES),
  reason: z.string().optional(),
  jobId: z.string().optional(),
});
export type PermissionProgress = z.infer<typeof permissionProgressSchema>;

export const grantStatusSchema = z.object({
  phase: z.enum(PHASES),
  uid: z.string(),
  ip: z.string(),
  /** Counts every write, so a long-poll can wait for "newer than what I saw". */
  rev: z.int().min(0),
  /** Attempts run for this pod since its last success or reset. */
  attempt: z.int().min(0),
  /** Failed attempts counted by the pod's breaker. */
  failures: z.int().min(0),
  retryAt: z.iso.datetime({ offset: true }).optional(),
  reason: z.string().optional(),
  permissions: z.array(permissionProgressSchema),
  updatedAt: z.iso.datetime({ offset: true }),
});
export type GrantStatus = z.infer<typeof grantStatusSchema>;

/** The status in the annotation; undefined when there is none yet (absent, or injection's "pending"). */
export function parseGrantStatus(annotation: string | undefined): GrantStatus | undefined {
  if (annotation === undefined || !annotation.startsWith("{")) return undefined;
  try {
    const parsed = grantStatusSchema.safeParse(JSON.parse(annotation));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function serializeGrantStatus(status: GrantStatus): string {
  const { phase, uid, ip, rev, attempt, failures, retryAt, reason, permissions, updatedAt } =
    status;
  return JSON.stringify({
    phase,
    uid,
    ip,
    rev,
    attempt,
    failures,
    retryAt,
    reason,
    permissions,
    updatedAt,
  });
}

/** Whether the status says the pod at `uid`/`ip` holds every permission. */
export function isGrantedTo(status: GrantStatus | undefined, uid: string, ip: string): boolean {
  return status?.phase === "granted" && status.uid === uid && status.ip === ip;
}

/** What the init client does with a status: done, give up (one line why), or keep waiting. */
export type InitVerdict =
  | { verdict: "granted" }
  | { verdict: "refused"; reason: string }
  | { verdict: "wait"; reason: string };

export function initVerdict(status: GrantStatus | undefined, uid: string, ip: string): InitVerdict {
  if (status === undefined) return { verdict: "wait", reason: "no status yet" };
  if (status.uid !== uid) return { verdict: "wait", reason: "status is about another pod UID" };
  if (status.phase === "blocked") {
    return { verdict: "refused", reason: status.reason ?? "the pod's breaker is open" };
  }
  if (isGrantedTo(status, uid, ip)) return { verdict: "granted" };
  const pending = status.permissions.filter(p => p.state !== "granted").map(p => p.name);
  const detail = status.reason ?? (pending.length ? `waiting for ${pending.join(", ")}` : "");
  return { verdict: "wait", reason: `${status.phase}${detail ? `: ${detail}` : ""}` };
}

/** One line for a GrantFailed Event or a log: the failed permissions and why. */
export function failureSummary(permissions: readonly PermissionProgress[]): string {
  return permissions
    .filter(p => p.state === "failed")
    .map(p => `${p.name} (${p.provider}): ${p.reason ?? "failed"}`)
    .join("; ");
}
