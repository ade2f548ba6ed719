// Tells the Pepr module's controllers (admission and watcher Deployments, as `pepr build` writes
// them) where the workloads are: which image to inject as the init container, the permission
// server's URL and audience, Bulwark's namespace. The controller image stays as Pepr sets it.
import type {
  KubernetesObject,
  V1Deployment,
  V1EnvVar,
  V1PodDisruptionBudget,
} from "@kubernetes/client-node";
import { permissionTlsSecret, scrapeAnnotations } from "./common";
import { moduleWatcherPodMonitor } from "./monitoring";
import { permissionServerUrl } from "./permission-server";
import type { BulwarkValues } from "./values";

/** The settings capabilities/*\/settings.ts read from the module's environment. */
export function moduleEnv(values: BulwarkValues): V1EnvVar[] {
  const { tls } = values.permissionServer;
  return [
    { name: "BULWARK_INIT_IMAGE", value: values.image },
    { name: "BULWARK_PERMISSION_SERVER", value: permissionServerUrl(values) },
    // Read through the API: the module's pods are in another namespace and cannot mount it.
    ...(tls.enabled
      ? [
          {
            name: "BULWARK_PERMISSION_CA_SECRET",
            value: `${values.namespace}/${permissionTlsSecret(values)}`,
          },
        ]
      : []),
    { name: "BULWARK_PERMISSION_AUDIENCE", value: values.permissionServer.audience },
    { name: "BULWARK_NAMESPACE", value: values.namespace },
    { name: "BULWARK_EDGE_ZONE_NAMESPACE", value: values.edgeHealth.zones.configNamespace },
    { name: "BULWARK_EDGE_VOTES", value: values.edgeHealth.votes },
    // The gateway's guard modes, so statuses and Events say what a mismatch does to traffic.
    { name: "BULWARK_INGRESS_CHECKSUM", value: String(values.gateway.checksum.ingress) },
    { name: "BULWARK_SECRET_CHECKSUM", value: String(values.gateway.checksum.secret) },
    {
      name: "BULWARK_CHECKSUM_PUBLISHER_NAMESPACES",
      value: values.gateway.checksum.publisherNamespaces.join(","),
    },
    {
      name: "BULWARK_CHECKSUM_REQUIRE_SIGNATURE",
      value: String(values.gateway.checksum.requireSignature),
    },
    {
      name: "BULWARK_CHECKSUM_KEYS",
      value: `${values.namespace}/${values.gateway.checksum.keysConfigMap}`,
    },
    // Served by the watcher only (the guard's reconciler runs there); admission pods ignore it.
    { name: "BULWARK_METRICS_PORT", value: String(values.metrics.modulePort) },
  ];
}

/** The named port the watcher's container serves the module's metrics on. */
export const MODULE_METRICS_PORT_NAME = "bulwark-metrics";

/** Whether the object is Pepr's watcher controller (it runs the reconcilers). */
export function isWatcherController(
  object: KubernetesObject,
): object is KubernetesObject & V1Deployment {
  const selector = (object as V1Deployment).spec?.selector?.matchLabels;
  return object.kind === "Deployment" && selector?.["pepr.dev/controller"] === "watcher";
}

/** The watcher's metrics port on its container, and the scrape annotations on its pods. */
function exposeModuleMetrics(deployment: V1Deployment, values: BulwarkValues): void {
  const port = values.metrics.modulePort;
  const template = deployment.spec?.template;
  if (port === 0 || template === undefined) return;
  for (const container of template.spec?.containers ?? []) {
    const ports = (container.ports ?? []).filter(p => p.name !== MODULE_METRICS_PORT_NAME);
    container.ports = [...ports, { name: MODULE_METRICS_PORT_NAME, containerPort: port }];
  }
  const annotations = { ...template.metadata?.annotations, ...scrapeAnnotations(values, port) };
  if (Object.keys(annotations).length > 0)
    template.metadata = { ...template.metadata, annotations };
}

/** Adds `env` to every container, replacing variables of the same name, keeping the rest in order. */
export function withEnv(env: readonly V1EnvVar[], current: readonly V1EnvVar[] = []): V1EnvVar[] {
  const names = new Set(env.map(e => e.name));
  return [...current.filter(e => !names.has(e.name)), ...env];
}

/** Whether the object is Pepr's admission controller (it serves the webhooks). */
export function isAdmissionController(
  object: KubernetesObject,
): object is KubernetesObject & V1Deployment {
  const selector = (object as V1Deployment).spec?.selector?.matchLabels;
  return object.kind === "Deployment" && selector?.["pepr.dev/controller"] === "admission";
}

/**
 * At most one admission pod away at a time (drains, upgrades): pods that name a permission group
 * and Bulwark's Ingresses are refused while none answers. Pepr writes none.
 */
export function admissionDisruptionBudget(
  deployment: V1Deployment,
): KubernetesObject & V1PodDisruptionBudget {
  const { name, namespace, labels } = deployment.metadata ?? {};
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: {
      maxUnavailable: 1,
      selector: deployment.spec?.selector,
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}

/**
 * The Pepr module's objects with Bulwark's settings on its controller Deployments, and a
 * PodDisruptionBudget after the admission controller.
 */
export function configureModule<T extends KubernetesObject>(
  objects: T[],
  values: BulwarkValues,
): T[] {
  const env = moduleEnv(values);
  return objects.flatMap(object => {
    if (object.kind !== "Deployment") return [object];
    const deployment = structuredClone(object) as unknown as V1Deployment;
    for (const container of deployment.spec?.template.spec?.containers ?? []) {
      container.env = withEnv(env, container.env);
    }
    if (!isWatcherController(object)) {
      const budget = isAdmissionController(object) ? [admissionDisruptionBudget(deployment)] : [];
      return [deployment, ...budget] as unknown as T[];
    }
    exposeModuleMetrics(deployment, values);
    const monitor = moduleWatcherPodMonitor(values, deployment, MODULE_METRICS_PORT_NAME);
    return [deployment, ...monitor] as unknown as T[];
  });
}
