// Names that several parts of Bulwark must agree on (../shared/DESIGN.md, "Names that are fixed").
// Keep every annotation key, finalizer and class name here, never as a literal elsewhere.

export const PERMISSION_PREFIX = "permission.bulwark.dev/";
export const PERMISSION_GROUP_ANNOTATION = `${PERMISSION_PREFIX}group`;
export const PERMISSION_STATUS_ANNOTATION = `${PERMISSION_PREFIX}status`;
export const PERMISSION_GRANT_ANNOTATION = `${PERMISSION_PREFIX}grant`;
export const POD_PERMISSION_FINALIZER = "stke.io/podpermission-protection";
/** The permission server replica working on a pod's grants, and until when (a lease). */
export const PERMISSION_CLAIM_ANNOTATION = `${PERMISSION_PREFIX}claim`;
/** Why Bulwark's pod mutation refuses a pod; the request policy refuses with it as the message. */
export const PERMISSION_REFUSAL_ANNOTATION = `${PERMISSION_PREFIX}refusal`;

export const NGINX_ANNOTATION_PREFIX = "nginx.ingress.kubernetes.io/";
export const INGRESS_CLASS = "bulwark";
export const INGRESS_CONTROLLER = "bulwark.dev/gateway";
export const CHECKSUM_GROUP = "tengine.taobao.org";

export const EDGE_ZONE_LABEL = "superedgehealth/topology-zone";
export const EDGE_HEALTH_ANNOTATION = "superedgehealth/node-health";
export const EDGE_UNHEALTHY_ANNOTATION = "nodeunhealth";

/** Set with the injection so the revocation sweep lists only Bulwark's pods. */
export const PERMISSION_MANAGED_LABEL = `${PERMISSION_PREFIX}managed`;

// Edge health (issue 8). The ConfigMap and its TaintZoneAdmission key are SuperEdge's; the
// autonomy limit (annotation and ConfigMap key) is Bulwark's own bound on how long a voted-healthy
// Unknown node keeps its pods.
export const EDGE_ZONE_CONFIGMAP = "edge-health-zone-config";
export const EDGE_TAINT_ZONE_ADMISSION_KEY = "TaintZoneAdmission";
export const EDGE_MAX_UNKNOWN_KEY = "MaxUnknownSeconds";
/** Per node: "false" opts out of protection, "true" opts in, a duration ("90m") sets its limit. */
export const EDGE_AUTONOMY_ANNOTATION = "edge.bulwark.dev/autonomy";
/** Superseded by EDGE_AUTONOMY_ANNOTATION; still read, for one release. */
export const EDGE_MAX_UNKNOWN_ANNOTATION = "edge.bulwark.dev/max-unknown-seconds";
/** The Node condition the edge-health reconciler writes. */
export const EDGE_AUTONOMY_CONDITION = "EdgeAutonomy";
/** When the daemons decided the vote on record, and until when it may be trusted (core/edge/vote.ts). */
export const EDGE_VOTE_DECIDED_AT_ANNOTATION = "edge.bulwark.dev/vote-decided-at";
export const EDGE_VOTE_VALID_UNTIL_ANNOTATION = "edge.bulwark.dev/vote-valid-until";
/** On an Endpoints or EndpointSlice: the pods Bulwark keeps ready there (core/edge/kept.ts). */
export const EDGE_KEPT_READY_ANNOTATION = "edge.bulwark.dev/kept-ready";

/** Bulwark's own Ingress annotations, for what ingress-nginx has no key for (core/annotations). */
export const BULWARK_INGRESS_ANNOTATION_PREFIX = "bulwark.dev/";

// An install's names (packaging/manifests/values.ts, charts/bulwark/templates/_helpers.tpl): the
// chart, the manifests build and the CLI's `install secrets` must agree on them.

/**
 * The prefix of every name an install gives: fullnameOverride, else the release name when it
 * contains "bulwark", else `<release>-bulwark`. Release `bulwark` keeps the unprefixed names.
 */
export function releasePrefix(release: string, fullnameOverride = ""): string {
  if (fullnameOverride) return fullnameOverride;
  return release.includes("bulwark") ? release : `${release}-bulwark`;
}

/** The Secrets an install needs and never writes (`bulwark install secrets` makes them). */
export function installSecretNames(prefix: string): {
  permissionTls: string;
  edgeHmac: string;
} {
  return {
    permissionTls: `${prefix}-permission-server-tls`,
    edgeHmac: `${prefix}-edge-health-hmac`,
  };
}

/** Where `bulwark permission tls` keeps the CA that signs the serving Secret `secret`. */
export const permissionCaSecretName = (secret: string): string => `${secret}-ca`;

/** The permission server's Service (its certificate names it). */
export const permissionServerServiceName = (prefix: string): string =>
  `${prefix}-permission-server`;
