// What Bulwark's admission may cost the cluster when it is down or slow. Pepr 1.1.4 gives every
// rule of a module one webhook with one failurePolicy (Fail, from onError: reject) and no
// matchConditions, so every pod, Secret and Ingress write in the cluster would wait on Bulwark.
// Each resource class gets a webhook of its own here, scoped by matchConditions (GA since
// Kubernetes 1.30, evaluated by the API server before it calls anyone):
//
// - pods: only those that name a permission group; fail closed (injection is the boundary).
// - Secrets: only kubernetes.io/tls ones; fail open: cert-manager and every TLS writer must not
//   depend on Bulwark, and the gateway re-validates every pair it serves.
// - Ingresses: only those Bulwark may serve (class bulwark, or no class, which is Bulwark's when
//   it is the default); fail closed: the guard's review of a served Ingress is the boundary.
// - nodes, endpoints, EndpointSlices: fail open; the kubelet and the controllers write them, and
//   the edge-health reconciler repairs whatever slips through.
// - anything else (Bulwark's own CRDs): as Pepr wrote it.
import type { KubernetesObject } from "@kubernetes/client-node";
import { INGRESS_CLASS, PERMISSION_GROUP_ANNOTATION } from "../core/names";

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
}

const LEGACY_CLASS = "kubernetes.io/ingress.class";

/** CEL over the admitted object; `object` is null on DELETE, which these rules never match. */
const POLICIES: Record<string, Policy> = {
  pods: {
    suffix: "pods",
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
        expression:
          "object != null && (has(object.spec.ingressClassName) ? object.spec.ingressClassName == '" +
          INGRESS_CLASS +
          "' : (!has(object.metadata.annotations) || !('" +
          LEGACY_CLASS +
          "' in object.metadata.annotations) || object.metadata.annotations['" +
          LEGACY_CLASS +
          "'] == '" +
          INGRESS_CLASS +
          "'))",
      },
    ],
  },
  ...Object.fromEntries(
    [...FAIL_OPEN_RESOURCES].map(resource => [
      resource,
      { suffix: "fail-open", failurePolicy: "Ignore" } satisfies Policy,
    ]),
  ),
};

interface Rule {
  resources?: string[];
  [key: string]: unknown;
}

interface Webhook {
  name: string;
  failurePolicy?: string;
  rules?: Rule[];
  matchConditions?: MatchCondition[];
  [key: string]: unknown;
}

type WebhookConfiguration = KubernetesObject & { webhooks?: Webhook[] };

/** The policy of a rule: by its first resource that has one (Pepr writes one per rule). */
function policyOf(rule: Rule): Policy | undefined {
  const resource = rule.resources?.find(r => POLICIES[r] !== undefined);
  return resource === undefined ? undefined : POLICIES[resource];
}

/** Each webhook's rules grouped by policy, each group a webhook of its own. */
export function applyWebhookPolicy<T extends KubernetesObject>(config: T): T {
  const typed = config as WebhookConfiguration;
  if (
    typed.kind !== "MutatingWebhookConfiguration" &&
    typed.kind !== "ValidatingWebhookConfiguration"
  )
    return config;
  const webhooks: Webhook[] = [];
  for (const webhook of typed.webhooks ?? []) {
    const groups = new Map<Policy | undefined, Rule[]>();
    for (const rule of webhook.rules ?? []) {
      const policy = policyOf(rule);
      groups.set(policy, [...(groups.get(policy) ?? []), rule]);
    }
    for (const [policy, rules] of groups) addScoped(webhooks, webhook, policy, rules);
  }
  return { ...typed, webhooks } as unknown as T;
}

/** `rules` of `webhook` as a webhook of `policy`, merged into one already made for it. */
function addScoped(
  webhooks: Webhook[],
  webhook: Webhook,
  policy: Policy | undefined,
  rules: Rule[],
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
    ...(policy.matchConditions ? { matchConditions: policy.matchConditions } : {}),
  });
}

function named(name: string, suffix: string): string {
  return name.replace(/^([^.]+)/, `$1-${suffix}`);
}
