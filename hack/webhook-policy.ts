// Pepr 1.1.4 gives every rule of a module one failurePolicy (Fail, from onError: reject). Node and
// endpoint writes must never wait on Bulwark: the kubelet and the controllers write them, and a
// down webhook would freeze the cluster. So those rules move to a second webhook that fails open;
// the edge-health reconciler repairs whatever slips through.
import type { KubernetesObject } from "@kubernetes/client-node";

export const FAIL_OPEN_RESOURCES = new Set(["nodes", "endpoints", "endpointslices"]);

interface Rule {
  resources?: string[];
  [key: string]: unknown;
}

interface Webhook {
  name: string;
  failurePolicy?: string;
  rules?: Rule[];
  [key: string]: unknown;
}

type WebhookConfiguration = KubernetesObject & { webhooks?: Webhook[] };

export function splitFailOpenRules<T extends KubernetesObject>(config: T): T {
  const typed = config as WebhookConfiguration;
  if (
    typed.kind !== "MutatingWebhookConfiguration" &&
    typed.kind !== "ValidatingWebhookConfiguration"
  )
    return config;
  const webhooks: Webhook[] = [];
  for (const webhook of typed.webhooks ?? []) {
    const open = (webhook.rules ?? []).filter(r =>
      r.resources?.some(res => FAIL_OPEN_RESOURCES.has(res)),
    );
    const closed = (webhook.rules ?? []).filter(r => !open.includes(r));
    if (closed.length > 0) webhooks.push({ ...webhook, rules: closed });
    if (open.length > 0) {
      const name = webhook.name.replace(/^([^.]+)/, "$1-fail-open");
      webhooks.push({ ...webhook, name, failurePolicy: "Ignore", rules: open });
    }
  }
  return { ...typed, webhooks } as unknown as T;
}
