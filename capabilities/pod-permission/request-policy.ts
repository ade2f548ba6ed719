// A pod that names a permission group is refused by this ValidatingAdmissionPolicy, which the API
// server evaluates itself, instead of by a second webhook call: one call per pod is what keeps the
// added admission latency within its target (hack/bench/README.md, "Admission").
// - Bulwark's mutation, which looks the group up, cannot refuse with a message of its own (Pepr
//   answers "configured to reject on error"). It writes the reason to permission.bulwark.dev/
//   refusal instead, and the first validation refuses with that text. A tenant who writes the
//   annotation refuses only their own pod.
// - The rest hold on the final pod, after every mutating webhook (another may have set
//   hostNetwork after Bulwark's ran): the same rules as core/permission/inject.ts's planInjection,
//   which the mutation applies first with the same messages; a differential test through the real
//   API server keeps the two alike (test/integration/pod-permission/request-policy.test.ts).
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_REFUSAL_ANNOTATION } from "../../core/names";
import { denyingPolicy, type PolicyRule } from "../../core/admission-policy";
import { DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN } from "../../core/permission/spec";
import { INIT_CONTAINER_NAME } from "../../core/permission/inject";
import { annotationPath } from "../../core/annotations/family";

/** Named as the Pepr module's objects are (pepr-<uuid>-…): it ships, and is uninstalled, with them. */
export const REQUEST_POLICY = "pepr-bulwark-pod-permission-request";

const GROUP = `object.metadata.annotations['${PERMISSION_GROUP_ANNOTATION}']`;
// string(): the API server types a messageExpression over annotations as dyn.
const REFUSAL = `string(object.metadata.annotations['${PERMISSION_REFUSAL_ANNOTATION}'])`;
const PATH = annotationPath(PERMISSION_GROUP_ANNOTATION);

/** The pattern as RE2 source: CEL's matches() is RE2, and JavaScript's (?:…) is RE2's too. */
const SUBDOMAIN = DNS_SUBDOMAIN_PATTERN.source.replaceAll("\\", "\\\\");

/** The rules, in order; the first one a pod breaks is the one its refusal names. */
export const REQUEST_RULES = [
  {
    broken: `'${PERMISSION_REFUSAL_ANNOTATION}' in object.metadata.annotations`,
    messageExpression: REFUSAL,
  },
  {
    broken: `!(size(${GROUP}) <= ${DNS_SUBDOMAIN_MAX} && ${GROUP}.matches('${SUBDOMAIN}'))`,
    message: `${PATH}: not a PermissionGroup name (RFC 1123 subdomain)`,
  },
  {
    broken: "object.spec.?hostNetwork.orValue(false)",
    message: `${PATH}: a permission group cannot be granted to a hostNetwork pod: its IP is the node's IP, so the grant would open the permission to every host-network pod on that node`,
  },
  {
    broken: "object.spec.?os.name.orValue('linux') != 'linux'",
    message: `spec.os.name: only linux pods can use permission groups: Bulwark's init container (${INIT_CONTAINER_NAME}) runs on Linux only`,
  },
] as const satisfies readonly PolicyRule[];

/** `ownNamespace`: Bulwark's, whose pods are never injected nor refused (as the webhook skips it). */
export function requestPolicyObjects(ownNamespace: string) {
  return denyingPolicy(REQUEST_POLICY, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE"],
          resources: ["pods"],
        },
      ],
    },
    scope: [
      {
        name: "names-a-permission-group",
        expression: `has(object.metadata.annotations) && '${PERMISSION_GROUP_ANNOTATION}' in object.metadata.annotations`,
      },
      { name: "outside-bulwarks-namespace", expression: `request.namespace != '${ownNamespace}'` },
    ],
    rules: REQUEST_RULES,
    reason: "Invalid",
  });
}
