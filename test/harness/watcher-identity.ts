// The Pepr watcher's identity for the revoke call, as in a cluster: a ServiceAccount that may
// patch pods, and a token of it (API server audience) in a file the module reads
// (BULWARK_REVOKE_TOKEN_PATH). The permission server reviews the token and asks whether that
// account may patch the pod whose grants it is asked to revoke.
import { CoreV1Api, type KubernetesObject } from "@kubernetes/client-node";
import { writeFileSync } from "node:fs";
import { applyOrThrow, loadKubeConfig } from "../../hack/control-plane/kube";

export const WATCHER_NAMESPACE = "pepr-system";
export const WATCHER_SERVICE_ACCOUNT = "pepr-bulwark-watcher";

export async function issueWatcherToken(kubeconfigPath: string, tokenPath: string): Promise<void> {
  const kc = loadKubeConfig(kubeconfigPath);
  const subject = {
    kind: "ServiceAccount",
    name: WATCHER_SERVICE_ACCOUNT,
    namespace: WATCHER_NAMESPACE,
  };
  await applyOrThrow(kc, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: WATCHER_NAMESPACE } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: WATCHER_SERVICE_ACCOUNT, namespace: WATCHER_NAMESPACE },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "bulwark-test-pepr-watcher" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "patch"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "bulwark-test-pepr-watcher" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "bulwark-test-pepr-watcher",
      },
      subjects: [subject],
    },
  ] as KubernetesObject[]);
  const core = kc.makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name: WATCHER_SERVICE_ACCOUNT,
    namespace: WATCHER_NAMESPACE,
    body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } },
  });
  writeFileSync(tokenPath, request.status?.token ?? "", { mode: 0o600 });
}
