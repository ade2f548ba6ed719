// Where an object lives on the API server. Every path the module builds by hand goes through
// here, so each segment (a namespace or a name a tenant chose) is checked and percent-encoded
// once, the same way, and no name can step into another path ("..", "a/b", "x?watch=1").
import { CHECKSUM_VERSION, checksumKinds, type ChecksumKind } from "../core/checksum/crd";
import { CHECKSUM_GROUP } from "../core/names";

/** A resource type: its API root (`/api/v1`, `/apis/<group>/<version>`) and plural name. */
export interface ApiResource {
  readonly api: string;
  readonly plural: string;
}

const core = (plural: string): ApiResource => ({ api: "/api/v1", plural });

export const NODES = core("nodes");
export const PODS = core("pods");
export const SECRETS = core("secrets");
export const CONFIG_MAPS = core("configmaps");
export const ENDPOINTS = core("endpoints");
export const EVENTS = core("events");
export const SERVICES = core("services");
export const NAMESPACES = core("namespaces");
export const ENDPOINT_SLICES: ApiResource = {
  api: "/apis/discovery.k8s.io/v1",
  plural: "endpointslices",
};
export const INGRESSES: ApiResource = { api: "/apis/networking.k8s.io/v1", plural: "ingresses" };
export const INGRESS_CLASSES: ApiResource = {
  api: "/apis/networking.k8s.io/v1",
  plural: "ingressclasses",
};

/** Tengine-Ingress's IngressCheckSum and SecretCheckSum. */
export const CHECKSUMS: Record<ChecksumKind, ApiResource> = {
  ingress: {
    api: `/apis/${CHECKSUM_GROUP}/${CHECKSUM_VERSION}`,
    plural: checksumKinds.ingress.plural,
  },
  secret: {
    api: `/apis/${CHECKSUM_GROUP}/${CHECKSUM_VERSION}`,
    plural: checksumKinds.secret.plural,
  },
};

/** Which of a resource's objects: all of them (no fields), a namespace's, or one by name. */
export interface ObjectAt {
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * Why `value` cannot be one path segment, as client-go's request builder refuses it
 * (apimachinery's IsValidPathSegmentName): "." and ".." are resolved away by every URL parser,
 * "/" splits the segment and "%" would be decoded twice. Empty addresses the collection above
 * (a PATCH to every node's collection, a list where one object was meant).
 */
function segmentProblem(value: string): string | undefined {
  if (value === "") return "is empty";
  if (value === "." || value === "..") return `may not be "${value}"`;
  if (value.includes("/") || value.includes("%")) return `may not contain "/" or "%": "${value}"`;
  return undefined;
}

function segment(plural: string, field: "namespace" | "name", value: string): string {
  const problem = segmentProblem(value);
  if (problem) throw new Error(`${plural}: ${field} ${problem}`);
  return encodeURIComponent(value);
}

/** The path of a collection (no name) or of one object; throws on a segment client-go refuses. */
export function resourcePath({ api, plural }: ApiResource, at: ObjectAt = {}): string {
  const { namespace, name } = at;
  const scope =
    namespace === undefined ? "" : `/namespaces/${segment(plural, "namespace", namespace)}`;
  const object = name === undefined ? "" : `/${segment(plural, "name", name)}`;
  return `${api}${scope}/${plural}${object}`;
}
