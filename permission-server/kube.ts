// The Kubernetes API as the permission server uses it: typed clients, merge patches with a
// resourceVersion precondition, and the status codes it branches on.
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from "@kubernetes/client-node";
import { workloadKubeConfig } from "../kube/workload-process";

export interface Kube {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly authn: AuthenticationV1Api;
  readonly authz: AuthorizationV1Api;
}

/** From a kubeconfig file, or the in-cluster service account when there is none. */
export function makeKube(kubeconfigPath: string | undefined): Kube {
  const kc = workloadKubeConfig(kubeconfigPath);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    authn: kc.makeApiClient(AuthenticationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
  };
}

const MERGE_PATCH = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/**
 * Sets (string) or removes (null) annotations of a pod, only if it is still at `resourceVersion`
 * (a merge patch carrying metadata.resourceVersion is a precondition: 409 Conflict otherwise).
 */
export async function patchPodAnnotations(
  kube: Kube,
  pod: { namespace: string; name: string; resourceVersion?: string },
  annotations: Record<string, string | null>,
): Promise<V1Pod> {
  const metadata: Record<string, unknown> = { annotations };
  if (pod.resourceVersion !== undefined) metadata.resourceVersion = pod.resourceVersion;
  return kube.core.patchNamespacedPod(
    { name: pod.name, namespace: pod.namespace, body: { metadata } },
    MERGE_PATCH,
  );
}
