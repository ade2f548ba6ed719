// The grant record: what the permission server granted to a pod, written to the pod's
// permission.bulwark.dev/grant annotation at grant time. Revocation reads it, never the pod's
// current IP: a Terminating pod's IP can already belong to a new pod.
import { z } from "zod";
import { annotationPath } from "../annotations/family";
import { PERMISSION_GRANT_ANNOTATION } from "../names";
import { fail, ok, type Result } from "../result";
import { issueErrors } from "./field-errors";

export const grantRecordSchema = z.object({
  /** The pod IP the permissions were granted to. */
  ip: z.union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address" }),
  /** The pod UID: the idempotency key of grant and revoke. */
  uid: z.string().min(1),
  group: z.string().min(1),
  permissions: z.array(
    z.object({
      name: z.string().min(1),
      provider: z.string().min(1),
      params: z.record(z.string(), z.unknown()),
    }),
  ),
  grantedAt: z.iso.datetime({ offset: true }),
});
export type GrantRecord = z.infer<typeof grantRecordSchema>;

const FIELD = annotationPath(PERMISSION_GRANT_ANNOTATION);

/**
 * The grant record of a pod's annotation: undefined when the annotation is absent (never
 * granted), an error naming the annotation when it is not a record.
 */
export function parseGrantRecord(annotation: string | undefined): Result<GrantRecord | undefined> {
  if (annotation === undefined) return ok(undefined);
  let json: unknown;
  try {
    json = JSON.parse(annotation);
  } catch (error) {
    return fail([{ field: FIELD, message: `is not JSON: ${(error as Error).message}` }]);
  }
  const parsed = grantRecordSchema.safeParse(json);
  return parsed.success ? ok(parsed.data) : fail(issueErrors(FIELD, parsed.error.issues));
}

/** The annotation value for `record`, keys in schema order so equal records serialize equally. */
export function serializeGrantRecord(record: GrantRecord): string {
  const { ip, uid, group, permissions, grantedAt } = record;
  return JSON.stringify({
    ip,
    uid,
    group,
    permissions: permissions.map(({ name, provider, params }) => ({ name, provider, params })),
    grantedAt,
  });
}
