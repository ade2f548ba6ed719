// Least-privilege RBAC per workload: exactly the API calls its code makes, nothing more. Cluster-wide
// rules go in a ClusterRole; what a workload touches only in one namespace goes in a Role there.
// Each rule says which code needs it; test/integration/packaging/rbac.test.ts checks the result
// against the real API server's authorizer, verb by verb.
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
} from "@kubernetes/client-node";
import { labels, workloadName, type Component } from "./common";
import type { BulwarkValues } from "./values";

export interface WorkloadRbac {
  cluster: V1PolicyRule[];
  /** Rules that hold only in one namespace (a Role and RoleBinding there). */
  namespaced: { namespace: string; rules: V1PolicyRule[] }[];
}

const rule = (apiGroup: string, resources: string[], verbs: string[]): V1PolicyRule => ({
  apiGroups: [apiGroup],
  resources,
  verbs,
});

export function gatewayRbac(values: BulwarkValues): WorkloadRbac {
  return {
    // gateway/source/resources.ts: one list+watch per kind, cluster-wide (Secrets: TLS type only,
    // by field selector, which RBAC cannot express). Read-only: the gateway writes nothing.
    cluster: [
      rule("networking.k8s.io", ["ingresses", "ingressclasses"], ["list", "watch"]),
      rule("", ["secrets", "services"], ["list", "watch"]),
      rule("discovery.k8s.io", ["endpointslices"], ["list", "watch"]),
      rule("tengine.taobao.org", ["ingresschecksums", "secretchecksums"], ["list", "watch"]),
    ],
    // The trusted signing keys: one ConfigMap, watched by name (field selector).
    namespaced: [
      {
        namespace: values.namespace,
        rules: [
          {
            ...rule("", ["configmaps"], ["get", "list", "watch"]),
            resourceNames: [values.gateway.checksum.keysConfigMap],
          },
        ],
      },
    ],
  };
}

export function permissionServerRbac(values: BulwarkValues): WorkloadRbac {
  return {
    cluster: [
      // permission-server/http/auth.ts: the init client's projected token (TokenReview); a revoke caller's right to
      // patch the pod (SubjectAccessReview).
      rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
      rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
      // pods/cache.ts: an informer on managed pods; grants/revoker.ts and prune lists; kube.ts patches
      // the status and grant annotations.
      rule("", ["pods"], ["get", "list", "watch", "patch"]),
      // providers/catalog.ts: a PermissionGroup and its PermissionProviders, read by name.
      rule("bulwark.dev", ["permissiongroups", "permissionproviders"], ["get"]),
      // providers/catalog.ts: the group's namespace's labels, for the providers' namespaceSelector.
      rule("", ["namespaces"], ["get"]),
      // providers/catalog.ts: a provider's credentials, a Secret reference with its own namespace, by name.
      rule("", ["secrets"], ["get"]),
      // pods/events.ts: Events on the pods it grants.
      rule("", ["events"], ["create"]),
    ],
    namespaced: [
      // kube/breaker-store.ts: the per-pod breaker ConfigMap in its own namespace; grants/ledger.ts: the
      // PermissionGrant ledger, which only this account writes.
      {
        namespace: values.namespace,
        rules: [
          rule("", ["configmaps"], ["get", "create", "update"]),
          rule("bulwark.dev", ["permissiongrants"], ["get", "list", "create", "update", "delete"]),
        ],
      },
    ],
  };
}

export function edgeHealthRbac(values: BulwarkValues): WorkloadRbac {
  return {
    // edge-health-daemon/kube.ts: a list+watch of Nodes, one merge patch of the vote annotation.
    cluster: [
      rule("", ["nodes"], ["get", "list", "watch", "patch"]),
      // The kubelet check (GET https://<peer>:10250/healthz with this ServiceAccount's token): the
      // kubelet authorizes it as nodes/healthz (KubeletFineGrainedAuthz, on by default from 1.33).
      // Older kubelets ask for nodes/proxy, which also allows exec into every pod: not granted
      // here; on such nodes turn the kubelet check off (edge-health-daemon/README.md).
      rule("", ["nodes/healthz"], ["get"]),
    ],
    // The zone ConfigMap, watched by name (field selector) in its namespace. The HMAC key is a
    // mounted Secret, so no access to Secrets.
    namespaced: [
      {
        namespace: values.edgeHealth.zones.configNamespace,
        rules: [rule("", ["configmaps"], ["get", "list", "watch"])],
      },
    ],
  };
}

export function workloadRbac(values: BulwarkValues, component: Component): WorkloadRbac {
  if (component === "gateway") return gatewayRbac(values);
  if (component === "permission-server") return permissionServerRbac(values);
  return edgeHealthRbac(values);
}

type Rbac = (V1ClusterRole | V1ClusterRoleBinding | V1Role | V1RoleBinding) & KubernetesObject;

/**
 * The ClusterRole, Roles and their bindings to the workload's ServiceAccount, all named as the
 * workload (release-prefixed: ClusterRoles of two releases do not collide).
 */
export function rbacObjects(values: BulwarkValues, component: Component): Rbac[] {
  const name = workloadName(values, component);
  const subject = { kind: "ServiceAccount", name, namespace: values.namespace };
  const { cluster, namespaced } = workloadRbac(values, component);
  const objects: Rbac[] = [];
  if (cluster.length > 0) {
    objects.push(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name, labels: labels(values, component) },
        rules: cluster,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name, labels: labels(values, component) },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [subject],
      },
    );
  }
  for (const { namespace, rules } of namespaced) {
    const metadata = { name, namespace, labels: labels(values, component) };
    objects.push(
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata, rules },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [subject],
      },
    );
  }
  return objects;
}
