import { PERMISSION_GROUP_ANNOTATION, PERMISSION_STATUS_ANNOTATION } from "../../core/names";

export type PermissionStatus = "pending" | "granted" | "failed" | "revoking";

/**
 * The annotations a pod carries after admission: a pod that names a permission group starts
 * `pending` until the permission server grants it. A pod that already carries a status (a
 * re-submitted object) keeps it. Returns undefined when nothing changes.
 */
export function initialPermissionStatus(
  annotations: Record<string, string> | undefined,
): PermissionStatus | undefined {
  if (!annotations?.[PERMISSION_GROUP_ANNOTATION]) return undefined;
  if (annotations[PERMISSION_STATUS_ANNOTATION]) return undefined;
  return "pending";
}
