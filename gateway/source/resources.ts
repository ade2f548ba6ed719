// What the gateway watches, and where: one list + watch per kind and namespace (or one
// cluster-wide when no namespace is named).
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import type { ResourceKind } from "./cache";
import type { ResourceSpec } from "../../kube/reflector";
import {
  CHECKSUMS,
  CONFIG_MAPS,
  ENDPOINT_SLICES,
  INGRESSES,
  INGRESS_CLASSES,
  SECRETS,
  SERVICES,
  resourcePath,
  type ApiResource,
} from "../../kube/api-paths";

interface KindPath {
  resource: ApiResource;
  namespaced: boolean;
  query?: Record<string, string>;
}

const PATHS: Record<ResourceKind, KindPath> = {
  ingress: { resource: INGRESSES, namespaced: true },
  // Only TLS Secrets: the rest of a cluster's Secrets are none of the gateway's business.
  secret: {
    resource: SECRETS,
    namespaced: true,
    query: { fieldSelector: `type=${TLS_SECRET_TYPE}` },
  },
  // Basic auth's users files (kubectl create secret generic); only those an auth-secret names
  // enter the view.
  authSecret: { resource: SECRETS, namespaced: true, query: { fieldSelector: "type=Opaque" } },
  endpointSlice: { resource: ENDPOINT_SLICES, namespaced: true },
  // Only to map a backend's port number or name to the EndpointSlice port (by the port's name).
  service: { resource: SERVICES, namespaced: true },
  ingressClass: { resource: INGRESS_CLASSES, namespaced: false },
  ingressChecksum: { resource: CHECKSUMS.ingress, namespaced: true },
  secretChecksum: { resource: CHECKSUMS.secret, namespaced: true },
  // One ConfigMap, by name (checksumKeysTarget): the gateway reads no other.
  checksumKeys: { resource: CONFIG_MAPS, namespaced: true },
};

export interface WatchTarget {
  kind: ResourceKind;
  /** undefined: cluster-wide. */
  namespace: string | undefined;
  spec: ResourceSpec;
}

/** The list + watch targets of one kind: one per namespace, or one for all namespaces. */
export function watchTargets(kind: ResourceKind, namespaces: readonly string[]): WatchTarget[] {
  const { resource, namespaced, query } = PATHS[kind];
  const scopes = namespaced && namespaces.length > 0 ? namespaces : [undefined];
  return scopes.map(namespace => ({
    kind,
    namespace,
    spec: {
      name: namespace ? `${resource.plural} in ${namespace}` : resource.plural,
      path: resourcePath(resource, { namespace }),
      query,
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
