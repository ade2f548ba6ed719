// Pod CREATE: validate (the group must exist, no hostNetwork), then inject in one mutation. A
// group the admission process's watch holds is not read again (known-groups.ts).
import { Log, type a, type PeprMutateRequest, type PeprValidateRequest } from "pepr";
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_MANAGED_LABEL } from "../../core/names";
import {
  planInjection,
  podDisplayName,
  type InjectConfig,
  type PermissionPod,
} from "../../core/permission";
import type { PermissionSettings } from "./settings";
import { isNotFound } from "../../kube/api-errors";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { knownGroups } from "./known-groups";

type ValidateResponse = ReturnType<PeprValidateRequest<a.Pod>["Approve"]>;

function namespaceOf(req: { Request: { namespace?: string } }, pod: PermissionPod): string {
  // ReplicaSet pods carry no namespace at admission: the request has it.
  return req.Request.namespace ?? pod.metadata?.namespace ?? "default";
}

/** The injection settings with the CA bundle as the module's mounted file holds it now. */
async function injectConfig(settings: PermissionSettings): Promise<InjectConfig> {
  const caBundle = await settings.ca.current();
  return caBundle ? { ...settings.inject, caBundle } : settings.inject;
}

export function injectPermissionInit(settings: PermissionSettings) {
  return async function injectPermissionInit(req: PeprMutateRequest<a.Pod>): Promise<void> {
    const pod: PermissionPod = req.Raw;
    const namespace = namespaceOf(req, pod);
    const plan = planInjection(pod, namespace, await injectConfig(settings));
    if (plan.action !== "inject") return;
    req.Raw.metadata = {
      ...plan.pod.metadata,
      labels: { ...req.Raw.metadata?.labels, [PERMISSION_MANAGED_LABEL]: "true" },
    } as a.Pod["metadata"];
    req.Raw.spec = plan.pod.spec as a.Pod["spec"];
    Log.info(
      { ns: namespace, name: podDisplayName(pod), group: plan.group },
      "injected bulwark-init",
    );
  };
}

export function validatePermissionPod(settings: PermissionSettings) {
  return async function validatePermissionPod(
    req: PeprValidateRequest<a.Pod>,
  ): Promise<ValidateResponse> {
    const pod: PermissionPod = req.Raw;
    const namespace = namespaceOf(req, pod);
    const plan = planInjection(pod, namespace, settings.inject);
    const name = podDisplayName(pod);
    if (plan.action === "deny") return req.Deny(`Pod ${namespace}/${name}: ${plan.reason}`, 422);
    // The mutation has already run: an injected pod is checked for its group like any other.
    const group = pod.metadata?.annotations?.[PERMISSION_GROUP_ANNOTATION];
    if (!group || namespace === settings.inject.ownNamespace) return req.Approve();
    if (knownGroups.holds(namespace, group)) return req.Approve();
    try {
      await keptAliveApi().get(
        `/apis/bulwark.dev/v1alpha1/namespaces/${encodeURIComponent(namespace)}/permissiongroups/${encodeURIComponent(group)}`,
      );
      return req.Approve();
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return req.Deny(
        `Pod ${namespace}/${name}: ${PERMISSION_GROUP_ANNOTATION} names PermissionGroup "${group}", which does not exist in namespace ${namespace}`,
        422,
      );
    }
  };
}
