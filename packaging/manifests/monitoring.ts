// PodMonitors for the prometheus-operator (metrics.podMonitor, off by default): one per enabled
// workload, selecting its pods by the workload's selector and scraping the port its /metrics is on,
// the permission server's over HTTPS, trusting the CA in its serving Secret. The scrape annotations
// (common.ts) are for a Prometheus that discovers pods itself; either or both may be on.
import type { KubernetesObject, V1Deployment } from "@kubernetes/client-node";
import {
  labels,
  permissionTlsSecret,
  selectorLabels,
  workloadName,
  type Component,
} from "./common";
import type { BulwarkValues } from "./values";

/** The named container port each workload serves /metrics on. */
const METRICS_PORT: Record<Component, string> = {
  gateway: "admin",
  "permission-server": "api",
  "edge-health": "metrics",
};

interface PodMetricsEndpoint {
  port: string;
  path: string;
  interval?: string;
  scheme?: "https";
  tlsConfig?: { ca: { secret: { name: string; key: string } }; serverName: string };
}

function endpoint(values: BulwarkValues, component: Component): PodMetricsEndpoint {
  const { interval } = values.metrics.podMonitor;
  const { tls } = values.permissionServer;
  const https = component === "permission-server" && tls.enabled;
  return {
    port: METRICS_PORT[component],
    path: "/metrics",
    ...(interval ? { interval } : {}),
    ...(https
      ? {
          scheme: "https",
          // The certificate names the Service; Prometheus scrapes the pod's address.
          tlsConfig: {
            ca: { secret: { name: permissionTlsSecret(values), key: "ca.crt" } },
            serverName: `${workloadName(values, component)}.${values.namespace}.svc`,
          },
        }
      : {}),
  };
}

export function podMonitor(values: BulwarkValues, component: Component): KubernetesObject {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: {
      name: workloadName(values, component),
      namespace: values.namespace,
      labels: labels(values, component, values.metrics.podMonitor.labels),
    },
    spec: {
      selector: { matchLabels: selectorLabels(values, component) },
      podMetricsEndpoints: [endpoint(values, component)],
    },
  } as KubernetesObject;
}

/** The Pepr watcher's PodMonitor (its namespace, its selector, the module's metrics port). */
export function moduleWatcherPodMonitor(
  values: BulwarkValues,
  watcher: V1Deployment,
  portName: string,
): KubernetesObject[] {
  const { enabled, interval, labels: extra } = values.metrics.podMonitor;
  if (!enabled || values.metrics.modulePort === 0) return [];
  return [
    {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PodMonitor",
      metadata: {
        name: watcher.metadata?.name,
        namespace: watcher.metadata?.namespace,
        labels: { ...watcher.metadata?.labels, ...extra },
      },
      spec: {
        selector: watcher.spec?.selector,
        podMetricsEndpoints: [
          { port: portName, path: "/metrics", ...(interval ? { interval } : {}) },
        ],
      },
    } as KubernetesObject,
  ];
}

export function podMonitors(values: BulwarkValues, components: Component[]): KubernetesObject[] {
  return values.metrics.podMonitor.enabled ? components.map(c => podMonitor(values, c)) : [];
}
