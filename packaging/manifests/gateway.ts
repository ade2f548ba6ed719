// The gateway: a StatefulSet (stable ordinals, a disk per ordinal for the last good configuration),
// a headless Service for the pods, a LoadBalancer (or ClusterIP) Service for traffic, the
// IngressClass that selects it, and a PodDisruptionBudget.
import type {
  KubernetesObject,
  V1EnvVar,
  V1IngressClass,
  V1PersistentVolumeClaim,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { INGRESS_CLASS, INGRESS_CONTROLLER } from "../../core/names";
import {
  fieldEnv,
  httpProbe,
  labels,
  metadata,
  podSecurityContext,
  podDisruptionBudget,
  podMetadata,
  selectorLabels,
  TMP_VOLUME,
  valueEnv,
  workloadContainer,
  workloadName,
} from "./common";
import type { BulwarkValues } from "./values";

export const GATEWAY = workloadName("gateway");
export const GATEWAY_HEADLESS = `${GATEWAY}-headless`;
/** Where the gateway keeps its last good configuration. */
export const GATEWAY_STATE_DIR = "/var/lib/bulwark-gateway";
export const GATEWAY_HEALTH = { live: "/healthz", ready: "/readyz", metrics: "/metrics" } as const;

/** What gateway/settings.ts reads. */
export function gatewayEnv(values: BulwarkValues): V1EnvVar[] {
  const { gateway } = values;
  return [
    // The ordinal (batched rollout) is the pod name's suffix.
    fieldEnv("BULWARK_POD_NAME", "metadata.name"),
    valueEnv("BULWARK_HTTP_PORT", gateway.ports.http),
    valueEnv("BULWARK_HTTPS_PORT", gateway.ports.https),
    valueEnv("BULWARK_ADMIN_PORT", gateway.ports.admin),
    valueEnv("BULWARK_WORKERS", gateway.workers),
    valueEnv("BULWARK_STATE_DIR", GATEWAY_STATE_DIR),
    valueEnv("BULWARK_INGRESS_CHECKSUM", gateway.checksum.ingress),
    valueEnv("BULWARK_SECRET_CHECKSUM", gateway.checksum.secret),
    valueEnv(
      "BULWARK_CHECKSUM_PUBLISHER_NAMESPACES",
      gateway.checksum.publisherNamespaces.join(","),
    ),
    valueEnv("BULWARK_CHECKSUM_REQUIRE_SIGNATURE", gateway.checksum.requireSignature),
    valueEnv("BULWARK_CHECKSUM_KEYS", `${values.namespace}/${gateway.checksum.keysConfigMap}`),
    valueEnv("BULWARK_WATCH_NAMESPACES", gateway.watchNamespaces.join(",")),
  ];
}

function stateClaim(values: BulwarkValues): V1PersistentVolumeClaim {
  const { persistence } = values.gateway;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "state", labels: labels("gateway") },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: persistence.size } },
      ...(persistence.storageClassName ? { storageClassName: persistence.storageClassName } : {}),
    },
  };
}

export function gatewayStatefulSet(values: BulwarkValues): V1StatefulSet & KubernetesObject {
  const { gateway } = values;
  const persistent = gateway.persistence.enabled;
  const container = workloadContainer(values, "gateway", {
    env: gatewayEnv(values),
    ports: [
      { name: "http", containerPort: gateway.ports.http, protocol: "TCP" },
      { name: "https", containerPort: gateway.ports.https, protocol: "TCP" },
      { name: "admin", containerPort: gateway.ports.admin, protocol: "TCP" },
    ],
    // Serving from the last good configuration counts as live; ready once routes are loaded.
    livenessProbe: httpProbe(GATEWAY_HEALTH.live, "admin", { period: 10, failures: 3 }),
    readinessProbe: httpProbe(GATEWAY_HEALTH.ready, "admin", { period: 5, failures: 2 }),
    startupProbe: httpProbe(GATEWAY_HEALTH.live, "admin", { period: 2, failures: 60 }),
    resources: gateway.resources,
    volumeMounts: [{ name: "state", mountPath: GATEWAY_STATE_DIR }],
  });
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: metadata(GATEWAY, values.namespace, "gateway"),
    spec: {
      serviceName: GATEWAY_HEADLESS,
      replicas: gateway.replicas,
      ...(gateway.ordinalStart > 0 ? { ordinals: { start: gateway.ordinalStart } } : {}),
      // Ordinals are identities, not an order: all gateways start at once.
      podManagementPolicy: "Parallel",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      selector: { matchLabels: selectorLabels("gateway") },
      template: {
        metadata: podMetadata(values, "gateway", gateway.ports.admin),
        spec: {
          serviceAccountName: GATEWAY,
          securityContext: podSecurityContext(),
          // Long enough to drain keep-alive connections after the readiness probe turns.
          terminationGracePeriodSeconds: 45,
          containers: [container],
          volumes: persistent ? [TMP_VOLUME] : [TMP_VOLUME, { name: "state", emptyDir: {} }],
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    topologyKey: "kubernetes.io/hostname",
                    labelSelector: { matchLabels: selectorLabels("gateway") },
                  },
                },
              ],
            },
          },
        },
      },
      ...(persistent ? { volumeClaimTemplates: [stateClaim(values)] } : {}),
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" },
    },
  };
}

export function gatewayServices(values: BulwarkValues): (V1Service & KubernetesObject)[] {
  const { gateway } = values;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata(GATEWAY_HEADLESS, values.namespace, "gateway"),
      spec: {
        clusterIP: "None",
        // Per-ordinal DNS names before readiness, so ordinals can find each other at start-up.
        publishNotReadyAddresses: true,
        selector: selectorLabels("gateway"),
        ports: [{ name: "admin", port: gateway.ports.admin, targetPort: "admin", protocol: "TCP" }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata(GATEWAY, values.namespace, "gateway"),
      spec: {
        type: gateway.service.type,
        ...(gateway.service.type === "ClusterIP" ? {} : { externalTrafficPolicy: "Local" }),
        selector: selectorLabels("gateway"),
        ports: [
          { name: "http", port: gateway.service.http, targetPort: "http", protocol: "TCP" },
          { name: "https", port: gateway.service.https, targetPort: "https", protocol: "TCP" },
        ],
      },
    },
  ];
}

export function gatewayIngressClass(values: BulwarkValues): V1IngressClass & KubernetesObject {
  const { ingressClass } = values.gateway;
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: {
      name: INGRESS_CLASS,
      labels: labels("gateway"),
      ...(ingressClass.default
        ? { annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } }
        : {}),
    },
    spec: { controller: INGRESS_CONTROLLER },
  };
}

export function gatewayObjects(values: BulwarkValues): KubernetesObject[] {
  return [
    gatewayIngressClass(values),
    ...gatewayServices(values),
    gatewayStatefulSet(values),
    podDisruptionBudget(values, "gateway"),
  ];
}
