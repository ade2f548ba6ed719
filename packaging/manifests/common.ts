// Pieces every workload manifest shares: labels, the container security context, probes, the
// Prometheus scrape annotations, ServiceAccounts. Pure: values in, objects out.
import type {
  KubernetesObject,
  V1Container,
  V1EnvVar,
  V1Namespace,
  V1PodDisruptionBudget,
  V1PodSecurityContext,
  V1Probe,
  V1SecurityContext,
  V1ServiceAccount,
  V1Volume,
  V1VolumeMount,
} from "@kubernetes/client-node";
import type { BulwarkValues } from "./values";

/** Every object an install creates carries it; `bulwark uninstall` finds them by it. */
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
export const PART_OF = "bulwark";
export const COMPONENT_LABEL = "app.kubernetes.io/component";
export const NAME_LABEL = "app.kubernetes.io/name";

/** The image's user: the `node` user of the node:*-slim base (the Dockerfile runs as it). */
export const RUN_AS_USER = 1000;

export type Component = "gateway" | "permission-server" | "edge-health";

export function workloadName(component: Component): string {
  return `bulwark-${component}`;
}

export function selectorLabels(component: Component): Record<string, string> {
  return { [NAME_LABEL]: workloadName(component), [PART_OF_LABEL]: PART_OF };
}

export function labels(component?: Component): Record<string, string> {
  if (!component) return { [PART_OF_LABEL]: PART_OF };
  return { ...selectorLabels(component), [COMPONENT_LABEL]: component };
}

export function metadata(
  name: string,
  namespace: string | undefined,
  component?: Component,
): KubernetesObject["metadata"] {
  return { name, ...(namespace ? { namespace } : {}), labels: labels(component) };
}

export function namespaceObject(name: string): V1Namespace & KubernetesObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: metadata(name, undefined) };
}

export function serviceAccount(
  values: BulwarkValues,
  component: Component,
): V1ServiceAccount & KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: metadata(workloadName(component), values.namespace, component),
  };
}

/** Pod annotations Prometheus' kubernetes_sd "pod" role reads (no PodMonitor needed). */
export function scrapeAnnotations(
  values: BulwarkValues,
  port: number,
  https = false,
): Record<string, string> {
  if (!values.metrics.scrape) return {};
  return {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": String(port),
    "prometheus.io/path": "/metrics",
    ...(https ? { "prometheus.io/scheme": "https" } : {}),
  };
}

/** A pod template's metadata: the component's labels, and scrape annotations when on. */
export function podMetadata(
  values: BulwarkValues,
  component: Component,
  metricsPort?: number,
  https = false,
): { labels: Record<string, string>; annotations?: Record<string, string> } {
  const annotations =
    metricsPort === undefined ? {} : scrapeAnnotations(values, metricsPort, https);
  return {
    labels: labels(component),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}

export function podSecurityContext(): V1PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: RUN_AS_USER,
    runAsGroup: RUN_AS_USER,
    fsGroup: RUN_AS_USER,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

export function containerSecurityContext(extraCapabilities: string[] = []): V1SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    privileged: false,
    capabilities: {
      drop: ["ALL"],
      ...(extraCapabilities.length > 0 ? { add: extraCapabilities } : {}),
    },
  };
}

export function httpProbe(
  path: string,
  port: string | number,
  timing: { period: number; failures: number },
  scheme: "HTTP" | "HTTPS" = "HTTP",
): V1Probe {
  return {
    httpGet: { path, port, scheme },
    periodSeconds: timing.period,
    timeoutSeconds: 2,
    failureThreshold: timing.failures,
  };
}

/** An env var from the Downward API. */
export function fieldEnv(name: string, fieldPath: string): V1EnvVar {
  return { name, valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } };
}

export function valueEnv(name: string, value: string | number | boolean): V1EnvVar {
  return { name, value: String(value) };
}

/** tsx caches compiled TypeScript under the temp dir; with a read-only root it gets an emptyDir. */
export const TMP_VOLUME: V1Volume = { name: "tmp", emptyDir: { sizeLimit: "64Mi" } };
export const TMP_MOUNT: V1VolumeMount = { name: "tmp", mountPath: "/tmp" };

/** The image's one entrypoint (`bulwark`) with the program as its first argument. */
export function workloadContainer(
  values: BulwarkValues,
  program: "gateway" | "permission-server" | "edge-health",
  rest: Omit<V1Container, "name" | "image" | "args">,
): V1Container {
  return {
    name: program,
    image: values.image,
    imagePullPolicy: values.imagePullPolicy,
    args: [program],
    ...rest,
    securityContext: rest.securityContext ?? containerSecurityContext(),
    volumeMounts: [TMP_MOUNT, ...(rest.volumeMounts ?? [])],
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
}

/** At most one pod of the workload away at a time (drains, upgrades). */
export function podDisruptionBudget(
  values: BulwarkValues,
  component: "gateway" | "permission-server",
): V1PodDisruptionBudget & KubernetesObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: metadata(workloadName(component), values.namespace, component),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(component) },
      // A pod that never got ready may be evicted, or a bad rollout blocks node drains forever.
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}
