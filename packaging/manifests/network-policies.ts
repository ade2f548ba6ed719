// NetworkPolicies (networkPolicy.enabled, off by default): ingress rules for the gateway and the
// permission server; egress is left alone (the workloads call the API server, providers and
// backends wherever they are). None for the edge-health daemons: they run on the host network,
// and NetworkPolicies select pods by their pod-network address, which a hostNetwork pod has not.
// Kubelet's probes come from the pod's own node, which network plugins let through.
import type {
  KubernetesObject,
  V1NetworkPolicy,
  V1NetworkPolicyPeer,
} from "@kubernetes/client-node";
import { PERMISSION_MANAGED_LABEL } from "../../core/names";
import { labels, selectorLabels, workloadName, type Component } from "./common";
import type { BulwarkValues } from "./values";

/** Where Pepr deploys every module (fixed by Pepr): the watcher calls the permission server. */
export const PEPR_NAMESPACE = "pepr-system";
/** The label every namespace carries with its own name (Kubernetes sets it). */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

type Rule = NonNullable<NonNullable<V1NetworkPolicy["spec"]>["ingress"]>[number];

const tcp = (...ports: string[]) => ports.map(port => ({ port, protocol: "TCP" }));

/** The values' scrapers: pods matching podSelector in namespaces matching namespaceSelector. */
function scrapers(values: BulwarkValues): V1NetworkPolicyPeer[] {
  const { namespaceSelector, podSelector } = values.networkPolicy.metrics;
  return [{ namespaceSelector, podSelector }];
}

function networkPolicy(
  values: BulwarkValues,
  component: Component,
  ingress: Rule[],
): V1NetworkPolicy & KubernetesObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: workloadName(values, component),
      namespace: values.namespace,
      labels: labels(values, component),
    },
    spec: {
      podSelector: { matchLabels: selectorLabels(values, component) },
      policyTypes: ["Ingress"],
      ingress,
    },
  } as V1NetworkPolicy & KubernetesObject;
}

/** Traffic from anywhere (the load balancer, clients); admin (probes, /metrics) from scrapers. */
export function gatewayNetworkPolicy(values: BulwarkValues): KubernetesObject {
  return networkPolicy(values, "gateway", [
    { ports: tcp("http", "https") },
    { from: scrapers(values), ports: tcp("admin") },
  ]);
}

/**
 * The API from the pods the Pepr module injected (their init container runs in the app pod's
 * network namespace, in any namespace, and the module labels the pod when it injects) and from the
 * module's own namespace (the watcher's revoke calls). A pod's creator may set that label too, so
 * it narrows who can connect; every call is still authenticated by its pod-bound token.
 */
export function permissionServerNetworkPolicy(values: BulwarkValues): KubernetesObject {
  const injected: V1NetworkPolicyPeer = {
    namespaceSelector: {},
    podSelector: { matchLabels: { [PERMISSION_MANAGED_LABEL]: "true" } },
  };
  const module: V1NetworkPolicyPeer = {
    namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: PEPR_NAMESPACE } },
  };
  return networkPolicy(values, "permission-server", [
    { from: [injected, module], ports: tcp("api") },
    { from: scrapers(values), ports: tcp("metrics") },
  ]);
}

export function networkPolicies(
  values: BulwarkValues,
  components: readonly Component[],
): KubernetesObject[] {
  if (!values.networkPolicy.enabled) return [];
  const policies: Partial<Record<Component, (v: BulwarkValues) => KubernetesObject>> = {
    gateway: gatewayNetworkPolicy,
    "permission-server": permissionServerNetworkPolicy,
  };
  return components.flatMap(c => policies[c]?.(values) ?? []);
}
