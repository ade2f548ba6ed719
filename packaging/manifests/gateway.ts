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
  containerResources,
  claimLabels,
  fieldEnv,
  httpProbe,
  labels,
  metadata,
  objectName,
  podSecurityContext,
  podDisruptionBudget,
  podMetadata,
  podPlacement,
  selectorLabels,
  valueEnv,
  workloadContainer,
  workloadMetadata,
  workloadName,
} from "./common";
import type { BulwarkValues } from "./values";

/** The StatefulSet, its ServiceAccount and the traffic Service: bulwark-gateway for release bulwark. */
export const gatewayName = (values: BulwarkValues) => workloadName(values, "gateway");
/** The headless Service the StatefulSet's pods are named under. */
export const gatewayHeadlessName = (values: BulwarkValues) =>
  objectName(values, "gateway-headless");
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
    valueEnv("BULWARK_LISTEN_MODE", gateway.listenMode),
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
    valueEnv("BULWARK_TRUSTED_PROXIES", gateway.trustedProxies.join(",")),
    valueEnv("BULWARK_PROXY_PROTOCOL", gateway.proxyProtocol),
    valueEnv("BULWARK_HTTP2", gateway.http2),
    valueEnv("BULWARK_HTTP2_CLEARTEXT", gateway.http2Cleartext),
    valueEnv("BULWARK_LIMIT_STATUS", gateway.limitStatus),
    valueEnv("BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS", gateway.authConnectTimeoutSeconds),
    valueEnv("BULWARK_AUTH_READ_TIMEOUT_SECONDS", gateway.authReadTimeoutSeconds),
  ];
}

function stateClaim(values: BulwarkValues): V1PersistentVolumeClaim {
  const { persistence } = values.gateway;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    // Part of the StatefulSet's immutable spec: the same labels for every version of the chart.
    metadata: { name: "state", labels: claimLabels(values, "gateway") },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: containerResources({ requests: { storage: persistence.size } }),
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
    resources: containerResources(gateway.resources),
    volumeMounts: [{ name: "state", mountPath: GATEWAY_STATE_DIR }],
  });
  const selector = selectorLabels(values, "gateway");
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: workloadMetadata(values, "gateway"),
    spec: {
      serviceName: gatewayHeadlessName(values),
      replicas: gateway.replicas,
      ...(gateway.ordinalStart > 0 ? { ordinals: { start: gateway.ordinalStart } } : {}),
      // Ordinals are identities, not an order: all gateways start at once.
      podManagementPolicy: "Parallel",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      selector: { matchLabels: selector },
      template: {
        metadata: podMetadata(values, "gateway", { port: gateway.ports.admin }),
        spec: {
          serviceAccountName: gatewayName(values),
          securityContext: podSecurityContext(),
          // Long enough to drain keep-alive connections after the readiness probe turns.
          terminationGracePeriodSeconds: 45,
          containers: [container],
          ...(persistent ? {} : { volumes: [{ name: "state", emptyDir: {} }] }),
          // Unless the values give an affinity: one gateway per node where there are enough.
          ...podPlacement(values, "gateway", {
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: {
                      topologyKey: "kubernetes.io/hostname",
                      labelSelector: { matchLabels: selector },
                    },
                  },
                ],
              },
            },
          }),
        },
      },
      ...(persistent ? { volumeClaimTemplates: [stateClaim(values)] } : {}),
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" },
    },
  };
}

export function gatewayServices(values: BulwarkValues): (V1Service & KubernetesObject)[] {
  const { gateway } = values;
  const { service } = gateway;
  const traffic = metadata(values, gatewayName(values), "gateway");
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata(values, gatewayHeadlessName(values), "gateway"),
      spec: {
        clusterIP: "None",
        // Per-ordinal DNS names before readiness, so ordinals can find each other at start-up.
        publishNotReadyAddresses: true,
        selector: selectorLabels(values, "gateway"),
        ports: [{ name: "admin", port: gateway.ports.admin, targetPort: "admin", protocol: "TCP" }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        ...traffic,
        ...(Object.keys(service.annotations).length > 0
          ? { annotations: service.annotations }
          : {}),
      },
      spec: {
        type: service.type,
        // A ClusterIP Service has no external traffic to direct; the API server refuses it there.
        ...(service.type === "ClusterIP"
          ? {}
          : { externalTrafficPolicy: service.externalTrafficPolicy }),
        selector: selectorLabels(values, "gateway"),
        ports: [
          { name: "http", port: service.http, targetPort: "http", protocol: "TCP" },
          { name: "https", port: service.https, targetPort: "https", protocol: "TCP" },
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
      // Fixed: the gateway, the Pepr module's webhooks and Ingresses name it.
      name: INGRESS_CLASS,
      labels: labels(values, "gateway"),
      ...(ingressClass.default
        ? { annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } }
        : {}),
    },
    spec: { controller: INGRESS_CONTROLLER },
  };
}

export function gatewayObjects(values: BulwarkValues): KubernetesObject[] {
  return [
    ...(values.gateway.ingressClass.create ? [gatewayIngressClass(values)] : []),
    ...gatewayServices(values),
    gatewayStatefulSet(values),
    podDisruptionBudget(values, "gateway"),
  ];
}
