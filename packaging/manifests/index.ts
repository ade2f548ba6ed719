// Everything a cluster needs beside the Pepr module, in apply order: Bulwark's namespace, each
// workload's ServiceAccount and RBAC, then the workloads. `npm run build` writes it as
// manifests/20-bulwark.yaml; the Helm chart (charts/bulwark) renders the same objects.
import type { KubernetesObject } from "@kubernetes/client-node";
import {
  labels,
  namespaceObject,
  objectName,
  serviceAccount,
  workloadName,
  type Component,
} from "./common";
import { edgeHealthObjects } from "./edge-health";
import { gatewayObjects } from "./gateway";
import { podMonitors } from "./monitoring";
import { networkPolicies } from "./network-policies";
import { permissionServerObjects } from "./permission-server";
import { rbacObjects } from "./rbac";
import { publisherPolicyObjects } from "../../capabilities/ingress-guard/publisher-policy";
import {
  metadataPolicyObjects,
  trustedWriters,
} from "../../capabilities/pod-permission/metadata-policy";
import type { BulwarkValues } from "./values";

export { configureModule, moduleEnv } from "./pepr-module";
export {
  defaultChartValues,
  defaultValues,
  fullname,
  mergeValues,
  parseChartValues,
  parseValues,
  valuesFrom,
  DEFAULT_IMAGE,
  DEFAULT_RELEASE,
  type BulwarkValues,
  type ChartValues,
} from "./values";

export function enabledComponents(values: BulwarkValues): Component[] {
  const components: Component[] = [];
  if (values.gateway.enabled) components.push("gateway");
  if (values.permissionServer.enabled) components.push("permission-server");
  if (values.edgeHealth.enabled) components.push("edge-health");
  return components;
}

/** Namespaces every cluster has: never written by an install. */
const BUILT_IN_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

/** A namespace the install puts objects into but does not own (never labelled, never deleted). */
function foreignNamespaces(values: BulwarkValues): KubernetesObject[] {
  const { configNamespace } = values.edgeHealth.zones;
  if (!values.edgeHealth.enabled || configNamespace === values.namespace) return [];
  if (BUILT_IN_NAMESPACES.has(configNamespace)) return [];
  return [{ apiVersion: "v1", kind: "Namespace", metadata: { name: configNamespace } }];
}

export function workloadManifests(values: BulwarkValues): KubernetesObject[] {
  const components = enabledComponents(values);
  const workloads: Record<Component, (v: BulwarkValues) => KubernetesObject[]> = {
    gateway: gatewayObjects,
    "permission-server": permissionServerObjects,
    "edge-health": edgeHealthObjects,
  };
  const writers = trustedWriters(values.namespace, workloadName(values, "permission-server"));
  return [
    namespaceObject(values),
    ...foreignNamespaces(values),
    ...components.map(c => serviceAccount(values, c)),
    ...components.flatMap(c => rbacObjects(values, c)),
    ...components.flatMap(c => workloads[c](values)),
    ...podMonitors(values, components),
    ...networkPolicies(values, components),
    // The checksum guard runs in the Pepr module whatever workloads are on.
    ...publisherPolicyObjects(values.gateway.checksum.publisherNamespaces).map(o =>
      ownObject(values, o),
    ),
    // Only Bulwark writes its pod metadata: grants come from the permission server.
    ...(values.permissionServer.enabled
      ? metadataPolicyObjects(writers).map(o => ownObject(values, o))
      : []),
  ];
}

interface PolicyObject {
  metadata: { name: string };
  spec?: { policyName?: string };
}

/**
 * A cluster-scoped object from capabilities/ (bulwark-<suffix>) named for the release
 * (<fullname>-<suffix>: the same for release bulwark), a binding's policyName with it, labelled.
 */
export function ownObject<T extends PolicyObject>(values: BulwarkValues, object: T): T {
  const named = (name: string) => objectName(values, name.replace(/^bulwark-/, ""));
  const { spec } = object;
  return {
    ...object,
    metadata: { ...object.metadata, name: named(object.metadata.name), labels: labels(values) },
    ...(spec?.policyName ? { spec: { ...spec, policyName: named(spec.policyName) } } : {}),
  };
}
