// The permission server: a Deployment (stateless, state in ConfigMaps and on pods), its Service at
// the address the Pepr module injects into init containers, a PodDisruptionBudget, and the
// PermissionProviders the values name.
import type { KubernetesObject, V1Deployment, V1EnvVar, V1Service } from "@kubernetes/client-node";
import {
  containerResources,
  fieldEnv,
  httpProbe,
  labels,
  metadata,
  podSecurityContext,
  podDisruptionBudget,
  podMetadata,
  permissionTlsSecret,
  podPlacement,
  selectorLabels,
  valueEnv,
  workloadContainer,
  workloadMetadata,
  workloadName,
} from "./common";
import type { BulwarkValues } from "./values";

/** Its Deployment, ServiceAccount and Service: bulwark-permission-server for release bulwark. */
export const permissionServerName = (values: BulwarkValues) =>
  workloadName(values, "permission-server");
export const PERMISSION_SERVER_HEALTH = { live: "/healthz", ready: "/healthz" };
export const TLS_MOUNT = "/etc/bulwark/permission-server-tls";

/** The URL init containers call: what the Pepr module is told (BULWARK_PERMISSION_SERVER). */
export function permissionServerUrl(values: BulwarkValues): string {
  const { port, tls } = values.permissionServer;
  const host = `${permissionServerName(values)}.${values.namespace}.svc`;
  return `${tls.enabled ? "https" : "http"}://${host}:${port}`;
}

/** What permission-server/settings.ts reads. */
export function permissionServerEnv(values: BulwarkValues): V1EnvVar[] {
  const server = values.permissionServer;
  return [
    fieldEnv("BULWARK_NAMESPACE", "metadata.namespace"),
    // Each replica's name in pod claims.
    fieldEnv("BULWARK_REPLICA_NAME", "metadata.name"),
    valueEnv("BULWARK_PERMISSION_PORT", server.port),
    valueEnv("BULWARK_PERMISSION_METRICS_PORT", server.metricsPort),
    valueEnv("BULWARK_PERMISSION_AUDIENCE", server.audience),
    ...(server.tls.enabled
      ? [
          valueEnv("BULWARK_TLS_CERT_PATH", `${TLS_MOUNT}/tls.crt`),
          valueEnv("BULWARK_TLS_KEY_PATH", `${TLS_MOUNT}/tls.key`),
        ]
      : []),
  ];
}

export function permissionServerDeployment(values: BulwarkValues): V1Deployment & KubernetesObject {
  const server = values.permissionServer;
  const scheme = server.tls.enabled ? "HTTPS" : "HTTP";
  const container = workloadContainer(values, "permission-server", {
    env: permissionServerEnv(values),
    ports: [
      { name: "api", containerPort: server.port, protocol: "TCP" },
      { name: "metrics", containerPort: server.metricsPort, protocol: "TCP" },
    ],
    livenessProbe: httpProbe(
      PERMISSION_SERVER_HEALTH.live,
      "api",
      { period: 10, failures: 3 },
      scheme,
    ),
    readinessProbe: httpProbe(
      PERMISSION_SERVER_HEALTH.ready,
      "api",
      { period: 5, failures: 2 },
      scheme,
    ),
    resources: containerResources(server.resources),
    ...(server.tls.enabled
      ? { volumeMounts: [{ name: "tls", mountPath: TLS_MOUNT, readOnly: true }] }
      : {}),
  });
  const selector = selectorLabels(values, "permission-server");
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: workloadMetadata(values, "permission-server"),
    spec: {
      replicas: server.replicas,
      selector: { matchLabels: selector },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        // Scraped on the plain metrics port: no CA needed.
        metadata: podMetadata(values, "permission-server", { port: server.metricsPort }),
        spec: {
          serviceAccountName: permissionServerName(values),
          securityContext: podSecurityContext(),
          terminationGracePeriodSeconds: 30,
          containers: [container],
          ...(server.tls.enabled
            ? { volumes: [{ name: "tls", secret: { secretName: permissionTlsSecret(values) } }] }
            : {}),
          // Unless the values give constraints: spread over nodes where it can.
          ...podPlacement(values, "permission-server", {
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: "kubernetes.io/hostname",
                whenUnsatisfiable: "ScheduleAnyway",
                labelSelector: { matchLabels: selector },
              },
            ],
          }),
        },
      },
    },
  };
}

export function permissionServerService(values: BulwarkValues): V1Service & KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(values, permissionServerName(values), "permission-server"),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(values, "permission-server"),
      ports: [
        { name: "api", port: values.permissionServer.port, targetPort: "api", protocol: "TCP" },
      ],
    },
  };
}

export function permissionProviders(values: BulwarkValues): KubernetesObject[] {
  return values.permissionServer.providers.map(provider => ({
    apiVersion: "bulwark.dev/v1alpha1",
    kind: "PermissionProvider",
    metadata: { name: provider.name, labels: labels(values, "permission-server") },
    spec: provider.spec,
  })) as KubernetesObject[];
}

export function permissionServerObjects(values: BulwarkValues): KubernetesObject[] {
  return [
    permissionServerService(values),
    permissionServerDeployment(values),
    podDisruptionBudget(values, "permission-server"),
    ...permissionProviders(values),
  ];
}
