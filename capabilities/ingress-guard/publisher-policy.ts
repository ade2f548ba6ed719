// What stops a tenant from attesting their own Ingress: a ValidatingAdmissionPolicy (in the API
// server itself, no webhook to fail open) that refuses checksum objects outside the publisher
// namespaces, and the ClusterRole a publisher is bound to, per namespace. The guard ignoring
// untrusted objects (core/checksum/publishers.ts) is the second line, for a policy removed.
import { CHECKSUM_GROUP } from "../../core/names";
import { celStringList, denyingPolicy } from "../../core/admission-policy";

export const PUBLISHER_POLICY = "bulwark-checksum-publishers";
export const PUBLISHER_ROLE = "bulwark-checksum-publisher";

const RESOURCES = ["ingresschecksums", "secretchecksums"];

export function publisherPolicyObjects(publisherNamespaces: readonly string[]) {
  const list = celStringList(publisherNamespaces);
  return [
    ...denyingPolicy(PUBLISHER_POLICY, {
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [CHECKSUM_GROUP],
            apiVersions: ["*"],
            operations: ["CREATE", "UPDATE"],
            resources: RESOURCES,
          },
        ],
      },
      rules: [
        {
          broken: `!(request.namespace in ${list})`,
          messageExpression: `'checksum objects are trusted only in the publisher namespaces ${publisherNamespaces.join(", ")}; not in ' + request.namespace`,
        },
      ],
      reason: "Forbidden",
    }),
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: PUBLISHER_ROLE },
      // What `bulwark checksum publish` does: list the objects it attests, read the IngressClass,
      // create the new checksum object and delete older ones. Bind it with a RoleBinding in each
      // publisher namespace for the checksum rules, and a ClusterRoleBinding for the reads.
      rules: [
        {
          apiGroups: [CHECKSUM_GROUP],
          resources: RESOURCES,
          verbs: ["get", "list", "create", "delete"],
        },
        {
          apiGroups: ["networking.k8s.io"],
          resources: ["ingresses", "ingressclasses"],
          verbs: ["get", "list"],
        },
        { apiGroups: [""], resources: ["secrets"], verbs: ["list"] },
      ],
    },
  ];
}
