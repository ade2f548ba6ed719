// Bulwark's metadata on a pod is Bulwark's: the status is what the init container waits for, the
// grant annotation mirrors the server's ledger for people, the managed label puts the pod in the
// revocation sweep, the finalizer holds the pod until its grants are revoked. A user who may patch
// pods in a namespace must not edit them. This ValidatingAdmissionPolicy runs in the API server
// itself (no webhook, so it holds while Bulwark is down) and refuses, except for Bulwark's own
// service accounts, system:masters, and whoever may `update` bulwark.dev/podpermissionmetadata
// cluster-wide (cluster administrators: `bulwark uninstall`, `bulwark permission reset`):
// - on UPDATE, any change to permission.bulwark.dev/* annotations or labels and the removal of
//   the finalizer;
// - on CREATE (validation runs after Bulwark's mutation, which drops a copied grant record or
//   claim and sets the status to `pending`), any permission.bulwark.dev/* metadata other than what
//   that mutation leaves: the group the creator asks for, status `pending`, label managed=true, or
//   the refusal it writes on a pod it refuses (request-policy.ts refuses that pod with its text).
// - a write that sets more than MAX_CHECKED_KEYS annotations or labels, or changes a map that
//   has more. The rules look at every key for the prefix, and the API server's CEL (cel-go 0.26
//   in Kubernetes 1.35; 0.32, the latest, the same) tracks a comprehension's cost in time
//   quadratic in its elements: `labels.all(k, true)` over 30 000 labels takes 2 s, 8 ms untracked.
//   Unbounded, each tenant's pod write could cost the API server seconds of CPU (30 000 labels:
//   5.2 s with the policy, 0.6 s without; 60 000 ran into the 60 s timeout;
//   hack/bench/metadata-policy-cost.ts). So the sizes are checked first (size() costs nothing), a
//   map an update leaves as it was is compared, not iterated, and the iterating rules run only on
//   bounded maps. Finalizers are looked up with `in`, which is linear.
import {
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_MANAGED_LABEL,
  PERMISSION_PREFIX,
  PERMISSION_REFUSAL_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
  POD_PERMISSION_FINALIZER,
} from "../../core/names";
import { celStringList, denyingPolicy, type PolicyRule } from "../../core/admission-policy";

export const METADATA_POLICY = "bulwark-pod-permission-metadata";

/**
 * Who else may write it: whoever RBAC allows this verb on this (virtual) resource cluster-wide.
 * Cluster administrators have it through `*`; an operator who runs `bulwark permission reset` or
 * `bulwark uninstall` without being one can be granted it. A namespace's RoleBinding cannot.
 */
export const OVERRIDE = {
  group: "bulwark.dev",
  resource: "podpermissionmetadata",
  verb: "update",
} as const;

/**
 * The users that write Bulwark's pod metadata: the permission server (its ServiceAccount is named
 * for the install's release: bulwark-permission-server for release bulwark) and the Pepr module.
 */
export function trustedWriters(
  namespace: string,
  permissionServer = "bulwark-permission-server",
): string[] {
  return [
    `system:serviceaccount:${namespace}:${permissionServer}`,
    "system:serviceaccount:pepr-system:pepr-bulwark",
  ];
}

/**
 * CEL: the keys of `map` under Bulwark's prefix are the same, with the same values, in both. The
 * maps' equality is tested first: one linear comparison (10 ms at 30 000 keys), where the
 * comprehensions are quadratic, and most updates leave the annotations and labels alone.
 */
function unchanged(old: string, current: string): string {
  const ours = (map: string) => `${map}.filter(k, k.startsWith('${PERMISSION_PREFIX}'))`;
  return (
    `${current} == ${old} || ` +
    `(${ours(old)}.all(k, k in ${current} && ${current}[k] == ${old}[k]) && ` +
    `${ours(current)}.all(k, k in ${old}))`
  );
}

/** CEL: the keys of `map` under Bulwark's prefix that `allowed` (a CEL condition on k) refuses. */
function refusedKeys(map: string, allowed: string): string {
  return `${map}.filter(k, k.startsWith('${PERMISSION_PREFIX}') && !(${allowed}))`;
}

const CREATE = "request.operation == 'CREATE'";
const UPDATE = "request.operation == 'UPDATE'";
const ANNOTATIONS = "object.metadata.?annotations.orValue({})";
const LABELS = "object.metadata.?labels.orValue({})";
// Read only on UPDATE (each rule that reads it tests UPDATE first): a CREATE has no oldObject.
const OLD_ANNOTATIONS = "oldObject.metadata.?annotations.orValue({})";
const OLD_LABELS = "oldObject.metadata.?labels.orValue({})";

const CREATE_ANNOTATIONS = refusedKeys(
  ANNOTATIONS,
  `k == '${PERMISSION_GROUP_ANNOTATION}' || k == '${PERMISSION_REFUSAL_ANNOTATION}' || (k == '${PERMISSION_STATUS_ANNOTATION}' && ${ANNOTATIONS}[k] == 'pending')`,
);
const CREATE_LABELS = refusedKeys(
  LABELS,
  `k == '${PERMISSION_MANAGED_LABEL}' && ${LABELS}[k] == 'true'`,
);

/**
 * The most annotations, and the most labels, a pod may carry for the rules below to be checked on
 * it. Far above any real pod's; a pass over a map this size takes 0.7 ms of the API server's CPU
 * (four passes on an update), against 2.4 ms at 1 000, 137 ms at 10 000 and 1.6 s at 30 000.
 */
export const MAX_CHECKED_KEYS = 500;

/**
 * The rule that keeps the iterating rules off a map larger than MAX_CHECKED_KEYS: on CREATE, and
 * on an UPDATE that changes the map (an update that leaves it as it was is not iterated, so a
 * large pod an administrator created can still be updated, and finalizers removed, by anyone
 * RBAC lets).
 */
function bounded(field: "annotations" | "labels", current: string, old: string): PolicyRule {
  const tooLarge = (map: string) => `size(${map}) > ${MAX_CHECKED_KEYS}`;
  return {
    broken:
      `(${CREATE} && ${tooLarge(current)}) || ` +
      `(${UPDATE} && ${current} != ${old} && (${tooLarge(current)} || ${tooLarge(old)}))`,
    messageExpression:
      `'metadata.${field}: ' + string(${tooLarge(current)} ? size(${current}) : size(${old})) + ` +
      `' ${field}; a pod may carry at most ${MAX_CHECKED_KEYS} unless Bulwark or a cluster administrator writes it (each is checked for ${PERMISSION_PREFIX}* keys)'`,
  };
}

/** The rules that look at every annotation or label; in order. */
export const KEY_RULES = [
  {
    broken: `${CREATE} && ${CREATE_ANNOTATIONS}.size() > 0`,
    messageExpression: `'a new pod may carry only ${PERMISSION_GROUP_ANNOTATION} of the ${PERMISSION_PREFIX}* annotations (Bulwark sets the rest); remove: ' + ${CREATE_ANNOTATIONS}.join(', ')`,
  },
  {
    broken: `${CREATE} && ${CREATE_LABELS}.size() > 0`,
    messageExpression: `'${PERMISSION_PREFIX}* labels are set by Bulwark only (${PERMISSION_MANAGED_LABEL}=true when it injects); remove: ' + ${CREATE_LABELS}.join(', ')`,
  },
  {
    broken: `${UPDATE} && !(${unchanged(OLD_ANNOTATIONS, ANNOTATIONS)})`,
    message: `${PERMISSION_PREFIX}* annotations are written by Bulwark only (its service accounts and cluster administrators)`,
  },
  {
    broken: `${UPDATE} && !(${unchanged(OLD_LABELS, LABELS)})`,
    message: `${PERMISSION_PREFIX}* labels are written by Bulwark only (its service accounts and cluster administrators)`,
  },
  {
    broken: `${UPDATE} && '${POD_PERMISSION_FINALIZER}' in oldObject.metadata.?finalizers.orValue([]) && !('${POD_PERMISSION_FINALIZER}' in object.metadata.?finalizers.orValue([]))`,
    message: `the ${POD_PERMISSION_FINALIZER} finalizer is removed by Bulwark once the pod's grants are revoked; not by hand`,
  },
] as const satisfies readonly PolicyRule[];

/** The rules, in order; the first one a write breaks is the one its refusal names. */
export const METADATA_RULES: readonly PolicyRule[] = [
  // First: a rule after a broken one is not evaluated (CEL's || and ?: stop there).
  bounded("annotations", ANNOTATIONS, OLD_ANNOTATIONS),
  bounded("labels", LABELS, OLD_LABELS),
  ...KEY_RULES,
];

/** `rules`: METADATA_RULES; a benchmark passes KEY_RULES alone to measure the policy unbounded. */
export function metadataPolicyObjects(
  writers: readonly string[],
  rules: readonly PolicyRule[] = METADATA_RULES,
) {
  const users = celStringList(writers);
  return denyingPolicy(METADATA_POLICY, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["pods"],
        },
      ],
    },
    scope: [
      {
        name: "not-bulwark-nor-an-administrator",
        expression: `!(request.userInfo.username in ${users}) && !('system:masters' in request.userInfo.?groups.orValue([])) && !authorizer.group('${OVERRIDE.group}').resource('${OVERRIDE.resource}').check('${OVERRIDE.verb}').allowed()`,
      },
    ],
    rules,
    reason: "Forbidden",
  });
}
