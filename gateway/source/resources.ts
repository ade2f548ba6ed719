// What the gateway watches, and where: one list + watch per kind and namespace (or one
// cluster-wide when no namespace is named).
import { CHECKSUM_GROUP } from "../../core/names";
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import type { ResourceKind } from "./cache";
import type { ResourceSpec } from "../../kube/reflector";

interface KindPath {
  prefix: string;
  plural: string;
  namespaced: boolean;
  query?: Record<string, string>;
}

const PATHS: Record<ResourceKind, KindPath> = {
  ingress: { prefix: "/apis/networking.k8s.io/v1", plural: "ingresses", namespaced: true },
  // Only TLS Secrets: the rest of a cluster's Secrets are none of the gateway's business.
  secret: {
    prefix: "/api/v1",
    plural: "secrets",
    namespaced: true,
    query: { fieldSelector: `type=${TLS_SECRET_TYPE}` },
  },
  // Basic auth's users files (kubectl create secret generic); only those an auth-secret names
  // enter the view.
  authSecret: {
    prefix: "/api/v1",
    plural: "secrets",
    namespaced: true,
    query: { fieldSelector: "type=Opaque" },
  },
  endpointSlice: {
    prefix: "/apis/discovery.k8s.io/v1",
    plural: "endpointslices",
    namespaced: true,
  },
  // Only to map a backend's port number or name to the EndpointSlice port (by the port's name).
  service: { prefix: "/api/v1", plural: "services", namespaced: true },
  ingressClass: {
    prefix: "/apis/networking.k8s.io/v1",
    plural: "ingressclasses",
    namespaced: false,
  },
  ingressChecksum: {
    prefix: `/apis/${CHECKSUM_GROUP}/v1`,
    plural: "ingresschecksums",
    namespaced: true,
  },
  secretChecksum: {
    prefix: `/apis/${CHECKSUM_GROUP}/v1`,
    plural: "secretchecksums",
    namespaced: true,
  },
  // One ConfigMap, by name (checksumKeysTarget): the gateway reads no other.
  checksumKeys: { prefix: "/api/v1", plural: "configmaps", namespaced: true },
};

export interface WatchTarget {
  kind: ResourceKind;
  /** undefined: cluster-wide. */
  namespace: string | undefined;
  spec: ResourceSpec;
}

/** The list + watch targets of one kind: one per namespace, or one for all namespaces. */
export function watchTargets(kind: ResourceKind, namespaces: readonly string[]): WatchTarget[] {
  const path = PATHS[kind];
  const scopes = path.namespaced && namespaces.length > 0 ? namespaces : [undefined];
  return scopes.map(namespace => ({
    kind,
    namespace,
    spec: {
      name: namespace ? `${path.plural} in ${namespace}` : path.plural,
      path: namespace
        ? `${path.prefix}/namespaces/${namespace}/${path.plural}`
        : `${path.prefix}/${path.plural}`,
      query: path.query,
    },
  }));
}

/** The one ConfigMap of trusted signing keys, by field selector (RBAC names it too). */
export function checksumKeysTarget(location: { namespace: string; name: string }): WatchTarget {
  const [target] = watchTargets("checksumKeys", [location.namespace]);
  return {
    ...target!,
    spec: {
      ...target!.spec,
      name: `configmap ${location.namespace}/${location.name}`,
      query: { fieldSelector: `metadata.name=${location.name}` },
    },
  };
}
