// Pod CREATE: one mutation decides and injects. It checks the pod (core/permission/inject.ts) and
// that its group exists (a group the admission process's watch holds is not read again:
// known-groups.ts), then injects. A pod it refuses gets the reason in
// permission.bulwark.dev/refusal and no injection; the request policy (request-policy.ts), which
// the API server evaluates without calling Bulwark, refuses it with that text and checks the
// final pod. A second webhook call per pod would double the admission latency Bulwark adds.
import { Log, type a, type PeprMutateRequest } from "pepr";
import {
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_MANAGED_LABEL,
  PERMISSION_REFUSAL_ANNOTATION,
} from "../../core/names";
import {
  planInjection,
  podDisplayName,
  type InjectConfig,
  type PermissionPod,
} from "../../core/permission";
import type { PermissionSettings } from "./settings";
import { describeError, isNotFound } from "../../kube/api-errors";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { knownGroups } from "./known-groups";
import { resourcePath } from "../../kube/api-paths";
import { PERMISSION_GROUPS } from "./permission-crds";

function namespaceOf(req: { Request: { namespace?: string } }, pod: PermissionPod): string {
  // ReplicaSet pods carry no namespace at admission: the request has it.
  return req.Request.namespace ?? pod.metadata?.namespace ?? "default";
}

/** The injection settings with the CA bundle as the module's mounted file holds it now. */
async function injectConfig(settings: PermissionSettings): Promise<InjectConfig> {
  const caBundle = await settings.ca.current();
  return caBundle ? { ...settings.inject, caBundle } : settings.inject;
}

/** Where a group is looked up: the admission watch's names, then the API server. */
export interface GroupLookup {
  known: { holds(namespace: string, name: string): boolean };
  read(path: string): Promise<unknown>;
}

const clusterGroups: GroupLookup = {
  known: knownGroups,
  read: path => keptAliveApi().get(path),
};

/** Why the pod cannot name `group` in `namespace`, or undefined when the group exists. */
export async function missingGroup(
  namespace: string,
  group: string,
  { known, read }: GroupLookup = clusterGroups,
): Promise<string | undefined> {
  if (known.holds(namespace, group)) return undefined;
  try {
    await read(resourcePath(PERMISSION_GROUPS, { namespace, name: group }));
    return undefined;
  } catch (error) {
    // Fail closed, with the reason: a pod is injected only for a group that is known to exist.
    if (!isNotFound(error)) {
      return `${PERMISSION_GROUP_ANNOTATION}: PermissionGroup "${group}" could not be read (${describeError(error)}); try again`;
    }
    return `${PERMISSION_GROUP_ANNOTATION} names PermissionGroup "${group}", which does not exist in namespace ${namespace}`;
  }
}

export function injectPermissionInit(settings: PermissionSettings, groups = clusterGroups) {
  return async function injectPermissionInit(req: PeprMutateRequest<a.Pod>): Promise<void> {
    const pod: PermissionPod = req.Raw;
    const namespace = namespaceOf(req, pod);
    const plan = planInjection(pod, namespace, await injectConfig(settings));
    if (plan.action === "skip") return;
    const name = podDisplayName(pod);
    const refuse = (reason: string): void => {
      req.SetAnnotation(PERMISSION_REFUSAL_ANNOTATION, `Pod ${namespace}/${name}: ${reason}`);
      Log.info({ ns: namespace, name, reason }, "refused: not injected");
    };
    if (plan.action === "deny") return refuse(plan.reason);
    const missing = await missingGroup(namespace, plan.group, groups);
    if (missing !== undefined) return refuse(missing);
    req.Raw.metadata = {
      ...plan.pod.metadata,
      labels: { ...req.Raw.metadata?.labels, [PERMISSION_MANAGED_LABEL]: "true" },
    } as a.Pod["metadata"];
    req.Raw.spec = plan.pod.spec as a.Pod["spec"];
    Log.info({ ns: namespace, name, group: plan.group }, "injected bulwark-init");
  };
}
