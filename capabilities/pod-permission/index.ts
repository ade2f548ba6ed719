import { Capability, a } from "pepr";
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_STATUS_ANNOTATION } from "../../core/names";
import { initialPermissionStatus } from "./status";

export const PodPermission = new Capability({
  name: "pod-permission",
  description: "Pre-authorizes pods that name a permission group before their containers start.",
});

const { When } = PodPermission;

When(a.Pod)
  .IsCreated()
  .WithAnnotation(PERMISSION_GROUP_ANNOTATION)
  .Mutate(function markPermissionPending(req) {
    const status = initialPermissionStatus(req.Raw.metadata?.annotations);
    if (status) req.SetAnnotation(PERMISSION_STATUS_ANNOTATION, status);
  });
