// The edge-health daemon: a DaemonSet on edge nodes, on the host network (it probes its peers
// node to node, and must keep working when the cluster network is what failed), and optionally
// SuperEdge's zone ConfigMap.
import type { KubernetesObject, V1ConfigMap, V1DaemonSet, V1EnvVar } from "@kubernetes/client-node";
import {
  EDGE_MAX_UNKNOWN_KEY,
  EDGE_TAINT_ZONE_ADMISSION_KEY,
  EDGE_ZONE_CONFIGMAP,
} from "../../core/names";
import {
  containerResources,
  edgeHmacSecret,
  fieldEnv,
  httpProbe,
  metadata,
  podMetadata,
  podPlacement,
  podSecurityContext,
  selectorLabels,
  valueEnv,
  workloadContainer,
  workloadMetadata,
  workloadName,
} from "./common";
import type { BulwarkValues } from "./values";

/** Its DaemonSet and ServiceAccount: bulwark-edge-health for release bulwark. */
export const edgeHealthName = (values: BulwarkValues) => workloadName(values, "edge-health");
/** The daemon serves /healthz on its peer port (what its peers' daemon check calls too). */
export const EDGE_HEALTH_PATHS = { live: "/healthz", ready: "/healthz" };
export const HMAC_MOUNT = "/etc/bulwark/edge-health-hmac";
export const KUBELET_CA_FILE = "/etc/bulwark/kubelet-ca/ca.crt";

/** BULWARK_EDGE_CHECK_* from the values; checks left empty keep the daemon's defaults. */
export function checkEnv(values: BulwarkValues): V1EnvVar[] {
  const { daemon, kubelet, tcp, kubeletCaHostPath } = values.edgeHealth.checks;
  const kubeletParts = [kubelet.trim(), kubeletCaHostPath && `ca-file=${KUBELET_CA_FILE}`];
  const settings: [string, string][] = [
    ["BULWARK_EDGE_CHECK_DAEMON", daemon.trim()],
    ["BULWARK_EDGE_CHECK_KUBELET", kubeletParts.filter(p => p !== "").join(",")],
    ["BULWARK_EDGE_CHECK_TCP", tcp.trim()],
  ];
  return settings.filter(([, value]) => value !== "").map(([name, value]) => valueEnv(name, value));
}

/** What edge-health-daemon/settings.ts reads. */
export function edgeHealthEnv(values: BulwarkValues): V1EnvVar[] {
  const edge = values.edgeHealth;
  return [
    fieldEnv("BULWARK_NODE_NAME", "spec.nodeName"),
    valueEnv("BULWARK_EDGE_PORT", edge.port),
    valueEnv("BULWARK_EDGE_METRICS_PORT", edge.metricsPort),
    valueEnv("BULWARK_EDGE_ZONE_NAMESPACE", edge.zones.configNamespace),
    // The key as a mounted file: the daemon needs no access to Secrets at all.
    valueEnv("BULWARK_EDGE_HMAC_KEY_FILE", `${HMAC_MOUNT}/${edge.hmacSecret.key}`),
    ...checkEnv(values),
  ];
}

export function edgeHealthDaemonSet(values: BulwarkValues): V1DaemonSet & KubernetesObject {
  const edge = values.edgeHealth;
  const caHostPath = edge.checks.kubeletCaHostPath;
  const container = workloadContainer(values, "edge-health", {
    env: edgeHealthEnv(values),
    // On the host network the container port is the node's port.
    ports: [
      { name: "peer", containerPort: edge.port, protocol: "TCP" },
      { name: "metrics", containerPort: edge.metricsPort, protocol: "TCP" },
    ],
    livenessProbe: httpProbe(EDGE_HEALTH_PATHS.live, "peer", { period: 10, failures: 3 }),
    readinessProbe: httpProbe(EDGE_HEALTH_PATHS.ready, "peer", { period: 10, failures: 2 }),
    resources: containerResources(edge.resources),
    volumeMounts: [
      { name: "hmac", mountPath: HMAC_MOUNT, readOnly: true },
      ...(caHostPath === ""
        ? []
        : [{ name: "kubelet-ca", mountPath: KUBELET_CA_FILE, readOnly: true }]),
    ],
  });
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: workloadMetadata(values, "edge-health"),
    spec: {
      selector: { matchLabels: selectorLabels(values, "edge-health") },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: podMetadata(values, "edge-health", { port: edge.metricsPort }),
        spec: {
          serviceAccountName: edgeHealthName(values),
          hostNetwork: true,
          dnsPolicy: "ClusterFirstWithHostNet",
          // Edge nodes, every taint, system-node-critical by default (the values).
          ...podPlacement(values, "edge-health"),
          securityContext: podSecurityContext(),
          terminationGracePeriodSeconds: 10,
          containers: [container],
          volumes: [
            {
              name: "hmac",
              secret: {
                secretName: edgeHmacSecret(values),
                items: [{ key: edge.hmacSecret.key, path: edge.hmacSecret.key }],
              },
            },
            ...(caHostPath === ""
              ? []
              : [{ name: "kubelet-ca", hostPath: { path: caHostPath, type: "File" } }]),
          ],
        },
      },
    },
  };
}

/** SuperEdge's zone ConfigMap, when the install manages it. */
export function edgeZoneConfigMap(values: BulwarkValues): (V1ConfigMap & KubernetesObject)[] {
  const { zones } = values.edgeHealth;
  if (!zones.manageConfig) return [];
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      // SuperEdge's fixed name: one release per cluster manages it.
      metadata: metadata(values, EDGE_ZONE_CONFIGMAP, undefined, zones.configNamespace),
      data: {
        [EDGE_TAINT_ZONE_ADMISSION_KEY]: String(zones.taintZoneAdmission),
        ...(zones.maxUnknownSeconds
          ? { [EDGE_MAX_UNKNOWN_KEY]: String(zones.maxUnknownSeconds) }
          : {}),
      },
    },
  ];
}

export function edgeHealthObjects(values: BulwarkValues): KubernetesObject[] {
  return [...edgeZoneConfigMap(values), edgeHealthDaemonSet(values)];
}
