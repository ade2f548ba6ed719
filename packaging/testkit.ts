// Helpers for the packaging tests: find objects by kind and name, and turn a container's env into
// what the process would see (Downward API fields filled in as the kubelet would).
import type { KubernetesObject, V1Container, V1EnvVar, V1PodSpec } from "@kubernetes/client-node";

export function find<T>(objects: readonly KubernetesObject[], kind: string, name: string): T {
  const found = objects.find(o => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.length} objects`);
  return found as T;
}

export function podSpec(object: KubernetesObject): V1PodSpec {
  const spec = (object as { spec?: { template?: { spec?: V1PodSpec } } }).spec?.template?.spec;
  if (!spec) throw new Error(`${object.kind} ${object.metadata?.name} has no pod template`);
  return spec;
}

export function podTemplateLabels(object: KubernetesObject): Record<string, string> {
  const template = (
    object as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }
  ).spec?.template;
  return template?.metadata?.labels ?? {};
}

export function onlyContainer(object: KubernetesObject): V1Container {
  const [container, ...more] = podSpec(object).containers;
  if (!container || more.length > 0) throw new Error("expected exactly one container");
  return container;
}

/** The process environment a container gets, with Downward API fields from `fields`. */
export function processEnv(
  env: readonly V1EnvVar[] | undefined,
  fields: Record<string, string>,
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const variable of env ?? []) {
    const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
    if (fieldPath !== undefined) {
      const value = fields[fieldPath];
      if (value === undefined) throw new Error(`no test value for field ${fieldPath}`);
      out[variable.name] = value;
    } else {
      out[variable.name] = variable.value ?? "";
    }
  }
  return out;
}

/** Every `matchLabels` pair is among `labels`. */
export function selects(
  matchLabels: Record<string, string> | undefined,
  labels: Record<string, string>,
): boolean {
  return Object.entries(matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}
