// The "Injected" Event: admission cannot write it (a ReplicaSet's pod has no name yet), so the
// watcher does, the first time it sees an injected pod.
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_STATUS_ANNOTATION } from "../../core/names";
import type { PermissionPod } from "../../core/permission";
import { recordEvent } from "../pepr/events";

const SEEN_LIMIT = 50_000;

export class InjectionNotices {
  /** UIDs already announced; bounded, and a restart may announce a pod again (Events are advisory). */
  readonly #seen = new Set<string>();

  async notice(pod: PermissionPod): Promise<void> {
    const uid = pod.metadata?.uid;
    const annotations = pod.metadata?.annotations ?? {};
    if (!uid || this.#seen.has(uid) || annotations[PERMISSION_STATUS_ANNOTATION] !== "pending")
      return;
    if (this.#seen.size >= SEEN_LIMIT) this.#seen.clear();
    this.#seen.add(uid);
    const group = annotations[PERMISSION_GROUP_ANNOTATION];
    await recordEvent(
      { ...pod, apiVersion: "v1", kind: "Pod" },
      {
        type: "Normal",
        reason: "Injected",
        message: `bulwark-init injected for PermissionGroup ${group}; the pod starts once the permission server grants it`,
      },
      "pod-permission",
    );
  }
}
