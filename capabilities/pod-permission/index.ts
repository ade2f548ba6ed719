import { Capability, a } from "pepr";
import { PERMISSION_GROUP_ANNOTATION } from "../../core/names";
import { injectPermissionInit } from "./admission";
import { validateGroup, validateProvider } from "./crd-admission";
import { PermissionGroup, PermissionProvider } from "./permission-kinds";
import { InjectionNotices } from "./notices";
import { PermissionStatusWriter } from "./resource-status";
import { isPermissionPod, Revoker } from "./revoke";
import { clusterPods } from "../pepr/watches";
import { loadSettings } from "./settings";
import { isWatcherProcess } from "../pepr/process";

export const PodPermission = new Capability({
  name: "pod-permission",
  description: "Pre-authorizes pods that name a permission group before their containers start.",
});

const { When } = PodPermission;
const settings = loadSettings();

// CREATE only: a pod update may not add containers (and must never block finalizer removal).
// No validating webhook: the mutation decides, request-policy.ts refuses (admission.ts).
When(a.Pod)
  .IsCreated()
  .WithAnnotation(PERMISSION_GROUP_ANNOTATION)
  .Mutate(injectPermissionInit(settings));
When(PermissionGroup).IsCreatedOrUpdated().Validate(validateGroup);
When(PermissionProvider).IsCreatedOrUpdated().Validate(validateProvider);

// Not Pepr's Finalize(): its fixed name and its removal on error do not fit (see revoke.ts).
const revoker = new Revoker(settings);
const notices = new InjectionNotices();

const statuses = new PermissionStatusWriter(settings.sweepMs);
When(PermissionGroup)
  .IsCreatedOrUpdated()
  .Watch(() => statuses.changed());
When(PermissionProvider)
  .IsCreatedOrUpdated()
  .Watch(() => statuses.changed());
When(PermissionProvider)
  .IsDeleted()
  .Watch(() => statuses.changed());

if (isWatcherProcess()) {
  // Bulwark's pods, from the process's one watch of every pod (which edge health reads too; not a
  // Pepr Watch binding, whose fluent watch holds every pod whole): a deleted pod is revoked, a
  // new one announced. The list at start finds the pods that began terminating while the
  // watcher was down.
  clusterPods.follow(
    (pod, deleted) =>
      deleted || pod.metadata?.deletionTimestamp
        ? revoker.observe(pod, deleted)
        : notices.notice(pod),
    isPermissionPod,
  );
  clusterPods.start();
  revoker.start();
  statuses.start();
}
