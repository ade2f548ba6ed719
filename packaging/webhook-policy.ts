// What Bulwark's admission may cost the cluster when it is down or slow. Pepr 1.1.4 gives every
// rule of a module one webhook with one failurePolicy (Fail, from onError: reject) and no
// matchConditions, so every pod, Secret and Ingress write in the cluster would wait on Bulwark.
// Each resource class gets a webhook of its own here, scoped by matchConditions (GA since
// Kubernetes 1.30, evaluated by the API server before it calls anyone):
//
// - pods: only those that name a permission group, outside Bulwark's own namespace; fail closed
//   (injection is the boundary).
// - Secrets: only kubernetes.io/tls ones, outside Bulwark's own namespace; fail open: cert-manager
//   and every TLS writer must not depend on Bulwark, and the gateway re-validates every pair it
//   serves.
// - Ingresses: only those Bulwark may serve: class bulwark, and class-less ones unless the install
//   says Bulwark's IngressClass is not the default (CEL cannot read the IngressClass, so a build
//   that cannot know, such as the module chart, keeps them); fail closed: the guard's review of a
//   served Ingress is the boundary.
// - nodes, endpoints, EndpointSlices: fail open; the kubelet and the controllers write them, and
//   the edge-health reconciler repairs whatever slips through.
// - anything else (Bulwark's own CRDs): as Pepr wrote it.
// Pods get one call, the mutation: the refusal and the final pod's checks are a
// ValidatingAdmissionPolicy that ships with the webhooks (admissionPolicies below).
import type { KubernetesObject } from "@kubernetes/client-node";
import { INGRESS_CLASS, PERMISSION_GROUP_ANNOTATION } from "../core/names";
import { requestPolicyObjects } from "../capabilities/pod-permission/request-policy";

export const FAIL_OPEN_RESOURCES = new Set(["nodes", "endpoints", "endpointslices"]);

interface MatchCondition {
  name: string;
  expression: string;
}

interface Policy {
  /** Appended to the webhook name's first label: `pepr-bulwark-<suffix>.pepr.dev`. */
  suffix: string;
  failurePolicy?: "Fail" | "Ignore";
  matchConditions?: MatchCondition[];
  /** Leave Bulwark's own namespace out (its own workloads never wait on its admission). */
  skipOwnNamespace?: true;
}

export interface WebhookPolicyOptions {
  /** Bulwark's namespace (values.namespace). */
  ownNamespace: string;
  /** Whether class-less Ingresses may be Bulwark's: false only when its class is known not to be the default. */
  classlessIngresses: boolean;
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicyOptions = {
  ownNamespace: "bulwark-system",
  classlessIngresses: true,
};

const LEGACY_CLASS = "kubernetes.io/ingress.class";

/** CEL: the Ingress names class bulwark, or (when `classless`) names no class at all. */
function ingressCondition(classless: boolean): string {
  const legacy = `object.metadata.annotations['${LEGACY_CLASS}']`;
  const hasLegacy = `has(object.metadata.annotations) && '${LEGACY_CLASS}' in object.metadata.annotations`;
  const byAnnotation = classless
    ? `(!(${hasLegacy}) || ${legacy} == '${INGRESS_CLASS}')`
    : `(${hasLegacy} && ${legacy} == '${INGRESS_CLASS}')`;
  return `object != null && (has(object.spec.ingressClassName) ? object.spec.ingressClassName == '${INGRESS_CLASS}' : ${byAnnotation})`;
}

/** CEL over the admitted object; `object` is null on DELETE, which these rules never match. */
const policies = (options: WebhookPolicyOptions): Record<string, Policy> => ({
  pods: {
    suffix: "pods",
    skipOwnNamespace: true,
    matchConditions: [
      {
        name: "names-a-permission-group",
        expression: `object != null && has(object.metadata.annotations) && '${PERMISSION_GROUP_ANNOTATION}' in object.metadata.annotations`,
      },
    ],
  },
  secrets: {
    suffix: "tls-secrets",
    failurePolicy: "Ignore",
    skipOwnNamespace: true,
    matchConditions: [
      {
        name: "is-a-tls-secret",
        expression: "object != null && has(object.type) && object.type == 'kubernetes.io/tls'",
      },
    ],
  },
  ingresses: {
    suffix: "ingresses",
    matchConditions: [
      {
        name: "may-be-served-by-bulwark",
        expression: ingressCondition(options.classlessIngresses),
      },
    ],
  },
  ...Object.fromEntries(
    [...FAIL_OPEN_RESOURCES].map(resource => [
      resource,
      { suffix: "fail-open", failurePolicy: "Ignore" } satisfies Policy,
    ]),
  ),
});

interface Rule {
  resources?: string[];
  [key: string]: unknown;
}

interface Webhook {
  name: string;
  failurePolicy?: string;
  namespaceSelector?: unknown;
  rules?: Rule[];
  matchConditions?: MatchCondition[];
  [key: string]: unknown;
}

type WebhookConfiguration = KubernetesObject & { webhooks?: Webhook[] };

/** The policy of a rule: by its first resource that has one (Pepr writes one per rule). */
function policyOf(all: Record<string, Policy>, rule: Rule): Policy | undefined {
  const resource = rule.resources?.find(r => all[r] !== undefined);
  return resource === undefined ? undefined : all[resource];
}

/** Each webhook's rules grouped by policy, each group a webhook of its own. */
export function applyWebhookPolicy<T extends KubernetesObject>(
  config: T,
  options: WebhookPolicyOptions = DEFAULT_WEBHOOK_POLICY,
): T {
  const typed = config as WebhookConfiguration;
  if (
    typed.kind !== "MutatingWebhookConfiguration" &&
    typed.kind !== "ValidatingWebhookConfiguration"
  )
    return config;
  const webhooks: Webhook[] = [];
  const all = policies(options);
  for (const webhook of typed.webhooks ?? []) {
    const groups = new Map<Policy | undefined, Rule[]>();
    for (const rule of webhook.rules ?? []) {
      const policy = policyOf(all, rule);
      groups.set(policy, [...(groups.get(policy) ?? []), rule]);
    }
    for (const [policy, rules] of groups) {
      addScoped(webhooks, webhook, policy, { rules, ownNamespace: options.ownNamespace });
    }
  }
  return { ...typed, webhooks } as unknown as T;
}

/** `rules` of `webhook` as a webhook of `policy`, merged into one already made for it. */
function addScoped(
  webhooks: Webhook[],
  webhook: Webhook,
  policy: Policy | undefined,
  { rules, ownNamespace }: { rules: Rule[]; ownNamespace: string },
): void {
  if (!policy) {
    webhooks.push({ ...webhook, rules });
    return;
  }
  const name = named(webhook.name, policy.suffix);
  const merged = webhooks.find(w => w.name === name);
  if (merged) {
    merged.rules = [...(merged.rules ?? []), ...rules];
    return;
  }
  webhooks.push({
    ...webhook,
    name,
    failurePolicy: policy.failurePolicy ?? webhook.failurePolicy,
    rules,
    ...(policy.skipOwnNamespace
      ? { namespaceSelector: withoutNamespace(webhook.namespaceSelector, ownNamespace) }
      : {}),
    ...(policy.matchConditions ? { matchConditions: policy.matchConditions } : {}),
  });
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const NAMESPACE_NAME = "kubernetes.io/metadata.name";

/** `selector` (Pepr's NotIn list of its own namespaces) that also leaves `namespace` out. */
function withoutNamespace(selector: unknown, namespace: string): Selector {
  const current = (selector ?? {}) as Selector;
  const expressions = [...(current.matchExpressions ?? [])];
  const index = expressions.findIndex(e => e.key === NAMESPACE_NAME && e.operator === "NotIn");
  const existing = index >= 0 ? expressions[index] : undefined;
  const values = [...new Set([...(existing?.values ?? []), namespace])];
  const notIn = { key: NAMESPACE_NAME, operator: "NotIn", values };
  if (index >= 0) expressions[index] = notIn;
  else expressions.push(notIn);
  return { ...current, matchExpressions: expressions };
}

function named(name: string, suffix: string): string {
  return name.replace(/^([^.]+)/, `$1-${suffix}`);
}

/**
 * The ValidatingAdmissionPolicies that complete the module's webhooks, installed and removed with
 * them: the pod mutation's refusals and final-pod checks (capabilities/pod-permission/
 * request-policy.ts).
 */
export function admissionPolicies(
  options: WebhookPolicyOptions = DEFAULT_WEBHOOK_POLICY,
): KubernetesObject[] {
  return requestPolicyObjects(options.ownNamespace);
}
