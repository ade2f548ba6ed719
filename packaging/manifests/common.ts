// Pieces every workload manifest shares: names, labels, the container security context, probes,
// the Prometheus scrape annotations, scheduling, ServiceAccounts. Pure: values in, objects out.
//
// Names: every object the install names is `<fullname>-...` (values.ts, fullname: the release
// name, or <release>-bulwark), so two releases do not collide; release `bulwark` keeps the names
// of earlier versions. Labels: every object carries app.kubernetes.io/part-of=bulwark (uninstall
// finds them by it) and app.kubernetes.io/instance=<release>. Selectors are name and part-of
// only, as before: the name label is the workload's release-prefixed name, so selectors of two
// releases never overlap, and those of release `bulwark` are unchanged (a workload's selector is
// immutable, and a Service's changed under a rolling upgrade would drop the old pods at once).
import type {
  KubernetesObject,
  V1Container,
  V1EnvVar,
  V1Namespace,
  V1PodDisruptionBudget,
  V1PodSecurityContext,
  V1PodSpec,
  V1Probe,
  V1ResourceRequirements,
  V1SecurityContext,
  V1ServiceAccount,
} from "@kubernetes/client-node";
import { installSecretNames } from "../../core/names";
import { fullname, type BulwarkValues, type Placement, type Resources } from "./values";

/** Every object an install creates carries it; `bulwark uninstall` finds them by it. */
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
export const PART_OF = "bulwark";
export const COMPONENT_LABEL = "app.kubernetes.io/component";
export const NAME_LABEL = "app.kubernetes.io/name";
/** The release (helm install NAME; `npm run build --release NAME`, default bulwark). */
export const INSTANCE_LABEL = "app.kubernetes.io/instance";

/** The image's user: the `node` user of the node:*-slim base (the Dockerfile runs as it). */
export const RUN_AS_USER = 1000;

export type Component = "gateway" | "permission-server" | "edge-health";

/** `<fullname>-<suffix>`: the name of an object the install makes (bulwark-gateway, ...). */
export function objectName(values: BulwarkValues, suffix: string): string {
  return `${fullname(values)}-${suffix}`;
}

/** The permission server's serving Secret: the values' name, else `<prefix>-permission-server-tls`. */
export function permissionTlsSecret(values: BulwarkValues): string {
  return (
    values.permissionServer.tls.secretName || installSecretNames(fullname(values)).permissionTls
  );
}

/** The edge-health daemons' HMAC Secret: the values' name, else `<prefix>-edge-health-hmac`. */
export function edgeHmacSecret(values: BulwarkValues): string {
  return values.edgeHealth.hmacSecret.name || installSecretNames(fullname(values)).edgeHmac;
}

export function workloadName(values: BulwarkValues, component: Component): string {
  return objectName(values, component);
}

/** The workload's selector: the same for every version of the chart, given the same names. */
export function selectorLabels(
  values: BulwarkValues,
  component: Component,
): Record<string, string> {
  return { [NAME_LABEL]: workloadName(values, component), [PART_OF_LABEL]: PART_OF };
}

/**
 * The gateway's volumeClaimTemplates' labels: part of the StatefulSet's spec, which cannot change
 * on upgrade, so never the release's or the user's labels.
 */
export function claimLabels(values: BulwarkValues, component: Component): Record<string, string> {
  return { ...selectorLabels(values, component), [COMPONENT_LABEL]: component };
}

/** The labels the install sets itself. */
export function ownLabels(values: BulwarkValues, component?: Component): Record<string, string> {
  const ours = component ? claimLabels(values, component) : { [PART_OF_LABEL]: PART_OF };
  return { ...ours, [INSTANCE_LABEL]: values.release };
}

/**
 * An object's labels: the install's own over `extra` (a workload's labels or podLabels) over the
 * values' commonLabels; theirs never replace the install's.
 */
export function labels(
  values: BulwarkValues,
  component?: Component,
  extra: Record<string, string> = {},
): Record<string, string> {
  return { ...values.commonLabels, ...extra, ...ownLabels(values, component) };
}

/** An object's name, namespace (the install's unless given; null: cluster-scoped) and labels. */
export function metadata(
  values: BulwarkValues,
  name: string,
  component?: Component,
  namespace: string | null = values.namespace,
): KubernetesObject["metadata"] {
  return { name, ...(namespace ? { namespace } : {}), labels: labels(values, component) };
}

export function namespaceObject(values: BulwarkValues): V1Namespace & KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: metadata(values, values.namespace, undefined, null),
  };
}

export function serviceAccount(
  values: BulwarkValues,
  component: Component,
): V1ServiceAccount & KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: metadata(values, workloadName(values, component), component),
  };
}

/** The values' scheduling and extra metadata of a workload. */
export function placementOf(values: BulwarkValues, component: Component): Placement {
  if (component === "gateway") return values.gateway;
  if (component === "permission-server") return values.permissionServer;
  return values.edgeHealth;
}

const nonEmpty = (map: Record<string, string>) => Object.keys(map).length > 0;

/** The workload object's metadata: the chart's labels over the values' labels, and annotations. */
export function workloadMetadata(
  values: BulwarkValues,
  component: Component,
): KubernetesObject["metadata"] {
  const { labels: extra, annotations } = placementOf(values, component);
  return {
    name: workloadName(values, component),
    namespace: values.namespace,
    labels: labels(values, component, extra),
    ...(nonEmpty(annotations) ? { annotations } : {}),
  };
}

/**
 * The pod template's scheduling from the values; `builtIn` is what an empty affinity or
 * topologySpreadConstraints means for this workload. Empty values set nothing.
 */
export function podPlacement(
  values: BulwarkValues,
  component: Component,
  builtIn: Pick<V1PodSpec, "affinity" | "topologySpreadConstraints"> = {},
): Partial<V1PodSpec> {
  const p = placementOf(values, component);
  const affinity = Object.keys(p.affinity).length > 0 ? p.affinity : builtIn.affinity;
  const spread =
    p.topologySpreadConstraints.length > 0
      ? p.topologySpreadConstraints
      : builtIn.topologySpreadConstraints;
  return {
    ...(values.imagePullSecrets.length > 0 ? { imagePullSecrets: values.imagePullSecrets } : {}),
    ...(p.priorityClassName ? { priorityClassName: p.priorityClassName } : {}),
    ...(nonEmpty(p.nodeSelector) ? { nodeSelector: p.nodeSelector } : {}),
    ...(p.tolerations.length > 0 ? { tolerations: p.tolerations } : {}),
    ...(affinity ? { affinity } : {}),
    ...(spread?.length ? { topologySpreadConstraints: spread } : {}),
  } as Partial<V1PodSpec>;
}

/**
 * The values' resources as a container's: a quantity YAML read as a number stays one (Kubernetes
 * takes both, and Helm writes it so), which the client's types, all strings, do not say.
 */
export function containerResources(
  resources: Resources | { requests: { storage: string | number } },
): V1ResourceRequirements {
  return resources as V1ResourceRequirements;
}

/** Pod annotations Prometheus' kubernetes_sd "pod" role reads (no PodMonitor needed). */
export function scrapeAnnotations(values: BulwarkValues, port: number): Record<string, string> {
  if (!values.metrics.scrape) return {};
  return {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": String(port),
    "prometheus.io/path": "/metrics",
  };
}

/**
 * A pod template's metadata: the component's labels over the values' podLabels, and the values'
 * podAnnotations under the scrape annotations (when on).
 */
export function podMetadata(
  values: BulwarkValues,
  component: Component,
  metrics: { port: number },
): { labels: Record<string, string>; annotations?: Record<string, string> } {
  const { podLabels, podAnnotations } = placementOf(values, component);
  const annotations = {
    ...podAnnotations,
    ...scrapeAnnotations(values, metrics.port),
  };
  return {
    labels: labels(values, component, podLabels),
    ...(nonEmpty(annotations) ? { annotations } : {}),
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
    metadata: metadata(values, workloadName(values, component), component),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(values, component) },
      // A pod that never got ready may be evicted, or a bad rollout blocks node drains forever.
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}
