// Names that several parts of Bulwark must agree on (../shared/DESIGN.md, "Names that are fixed").
// Keep every annotation key, finalizer and class name here, never as a literal elsewhere.

export const PERMISSION_PREFIX = "permission.bulwark.dev/";
export const PERMISSION_GROUP_ANNOTATION = `${PERMISSION_PREFIX}group`;
export const PERMISSION_STATUS_ANNOTATION = `${PERMISSION_PREFIX}status`;
export const PERMISSION_GRANT_ANNOTATION = `${PERMISSION_PREFIX}grant`;
export const POD_PERMISSION_FINALIZER = "stke.io/podpermission-protection";
/** The permission server replica working on a pod's grants, and until when (a lease). */
export const PERMISSION_CLAIM_ANNOTATION = `${PERMISSION_PREFIX}claim`;

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
export const EDGE_MAX_UNKNOWN_ANNOTATION = "edge.bulwark.dev/max-unknown-seconds";
