// The per-pod breaker. Three failed grants open it, so a misconfigured pod stops hammering its
// providers; while open, one attempt is let through each time the pod's jittered backoff since
// its last failure elapses (permission-server/pod-retry.ts), and that attempt's success closes it:
// thousands of pods recover by themselves after an authorization outage. A reset closes it at once. Pure transitions over a plain record, and
// its storage as one entry, keyed by pod UID, in a ConfigMap's data.
import { z } from "zod";
import { fail, ok, type FieldError, type Result } from "../result";
import { configMapDataBytes, configMapKeyProblems, CONFIGMAP_DATA_MAX_BYTES } from "./configmap";
import { issueErrors } from "./field-errors";

/** Failed grants that open a pod's breaker. */
export const BREAKER_THRESHOLD = 3;
/** Longest error kept, so an entry stays around 1 KiB and ~1000 open pods fit in 1 MiB. */
export const BREAKER_ERROR_MAX = 512;

export const breakerRecordSchema = z.object({
  failures: z.int().min(0),
  /** When the breaker opened (RFC 3339); absent while closed. */
  openedAt: z.iso.datetime({ offset: true }).optional(),
  lastError: z.string().optional(),
  /** Who the entry is about, for `bulwark` CLI listings; the key alone is an opaque UID. */
  pod: z.object({ namespace: z.string(), name: z.string(), ip: z.string().optional() }).optional(),
});
export type BreakerRecord = z.infer<typeof breakerRecordSchema>;

export const CLOSED_BREAKER: Readonly<BreakerRecord> = Object.freeze({ failures: 0 });

export function isBreakerOpen(record: BreakerRecord | undefined): boolean {
  return record?.openedAt !== undefined;
}

/** Whether a grant may be attempted for the pod regardless of backoff: no while its breaker is open. */
export function breakerGate(
  record: BreakerRecord | undefined,
): { allow: true } | { allow: false; reason: string } {
  if (!record || record.openedAt === undefined) return { allow: true };
  return {
    allow: false,
    reason: `breaker open since ${record.openedAt} after ${record.failures} failed grants (last: ${record.lastError ?? "unknown"})`,
  };
}

/**
 * One more failed grant. The breaker opens when the failures reach `threshold` and stays open
 * (openedAt unchanged) however many more come. Count only failures of the pod's own grant,
 * not rejections by a global breaker in front of the provider.
 */
export function recordFailure(
  record: BreakerRecord | undefined,
  error: string,
  now: Date,
  threshold: number = BREAKER_THRESHOLD,
): BreakerRecord {
  const failures = (record?.failures ?? 0) + 1;
  const openedAt = record?.openedAt ?? (failures >= threshold ? now.toISOString() : undefined);
  const next: BreakerRecord = { ...record, failures, lastError: error.slice(0, BREAKER_ERROR_MAX) };
  if (openedAt !== undefined) next.openedAt = openedAt;
  return next;
}

/** A successful grant (the probe through an open breaker included): closed, no failures. */
export function recordSuccess(): BreakerRecord {
  return { ...CLOSED_BREAKER };
}

/** The operator's reset: closed, no failures. The caller also resets the pod's backoff. */
export function resetBreaker(): BreakerRecord {
  return { ...CLOSED_BREAKER };
}

// ---- Storage: ConfigMap data, key = pod UID, value = the record as JSON.

function entryField(uid: string): string {
  return `data[${JSON.stringify(uid)}]`;
}

function keyErrors(uid: string): FieldError[] {
  return configMapKeyProblems(uid).map(message => ({
    field: entryField(uid),
    message: `key ${message}`,
  }));
}

export function serializeBreaker(record: BreakerRecord): string {
  const { failures, openedAt, lastError, pod } = record;
  return JSON.stringify({ failures, openedAt, lastError, pod });
}

/** One entry's value; an error names the entry when it is not a breaker record. */
export function parseBreaker(value: string, uid: string): Result<BreakerRecord> {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (error) {
    return fail([{ field: entryField(uid), message: `is not JSON: ${(error as Error).message}` }]);
  }
  const parsed = breakerRecordSchema.safeParse(json);
  return parsed.success ? ok(parsed.data) : fail(issueErrors(entryField(uid), parsed.error.issues));
}

/** The pod's breaker from the ConfigMap's data: closed when it has no entry. */
export function readBreaker(
  data: Readonly<Record<string, string>> | undefined,
  uid: string,
): Result<BreakerRecord> {
  const errors = keyErrors(uid);
  if (errors.length > 0) return fail(errors);
  const value = data?.[uid];
  return value === undefined ? ok({ ...CLOSED_BREAKER }) : parseBreaker(value, uid);
}

/**
 * The ConfigMap's data with the pod's entry set, or removed when the breaker is closed with no
 * failures (nothing to remember). Fails on a bad key or when the data would pass 1 MiB; write
 * it back with the resourceVersion it was read at.
 */
export function writeBreaker(
  data: Readonly<Record<string, string>> | undefined,
  uid: string,
  record: BreakerRecord,
): Result<Record<string, string>> {
  const errors = keyErrors(uid);
  if (errors.length > 0) return fail(errors);
  const next = { ...data };
  if (record.failures === 0 && record.openedAt === undefined) {
    delete next[uid];
    return ok(next);
  }
  next[uid] = serializeBreaker(record);
  const bytes = configMapDataBytes(next);
  if (bytes > CONFIGMAP_DATA_MAX_BYTES) {
    return fail([
      {
        field: entryField(uid),
        message: `would make the ConfigMap's data ${bytes} bytes, over the API server's ${CONFIGMAP_DATA_MAX_BYTES}`,
      },
    ]);
  }
  return ok(next);
}

/** Entries whose pod no longer exists: remove them when the sweep lists live pod UIDs. */
export function staleBreakerKeys(
  data: Readonly<Record<string, string>> | undefined,
  liveUids: ReadonlySet<string>,
): string[] {
  return Object.keys(data ?? {})
    .filter(uid => !liveUids.has(uid))
    .sort();
}
