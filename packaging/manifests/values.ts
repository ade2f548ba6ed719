// The settings a cluster's Bulwark install is made from. The same keys, with the same defaults, are
// the Helm chart's values (charts/bulwark/values.yaml); `npm run build` uses the defaults with the
// image it is given. Checked by one zod schema so a bad value names its field.
import { z } from "zod";
import packageJson from "../../package.json";
import { fail, ok, type FieldError, type Result } from "../../core/result";
import { GUARD_MODES } from "../../core/checksum";

/** The image a build names when it is given none: the published one for this package's version. */
export const DEFAULT_IMAGE = `ghcr.io/bulwark-dev/bulwark:${packageJson.version}`;
export const DEFAULT_NAMESPACE = "bulwark-system";

export const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/, {
  message: "must be a Kubernetes quantity such as 100m, 256Mi or 1",
});
const resourcesSchema = z.object({
  requests: z.object({ cpu: quantity, memory: quantity }),
  limits: z.object({ cpu: quantity, memory: quantity }),
});
export type Resources = z.infer<typeof resourcesSchema>;

const port = z.int().min(1).max(65535);
/** The gateway's BULWARK_*_CHECKSUM: the three modes, or the old booleans. */
const guardMode = z.union([z.enum(GUARD_MODES), z.boolean()]);
const tolerationSchema = z.object({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.int().optional(),
});
export type Toleration = z.infer<typeof tolerationSchema>;

/** A PermissionProvider the install creates (cluster-scoped): its name and spec, as in the CRD. */
const providerSchema = z.object({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: "must be a DNS name" }),
  spec: z.record(z.string(), z.unknown()),
});

export const valuesSchema = z.object({
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: "must be a DNS label" }),
  image: z.string().min(1),
  imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]),
  /** Adds prometheus.io/scrape, port and path to each workload's pods. */
  metrics: z.object({ scrape: z.boolean() }),
  gateway: z.object({
    enabled: z.boolean(),
    replicas: z.int().min(1),
    /** The StatefulSet's first ordinal (spec.ordinals.start): pods are gateway-<start>..<start+replicas-1>. */
    ordinalStart: z.int().min(0),
    ports: z.object({ http: port, https: port, admin: port }),
    service: z.object({
      type: z.enum(["LoadBalancer", "ClusterIP", "NodePort"]),
      http: port,
      https: port,
    }),
    /** Worker processes of the data plane (BULWARK_WORKERS); match the CPU limit. */
    workers: z.int().min(1).max(64),
    /** Namespaces to serve Ingresses from (BULWARK_WATCH_NAMESPACES); empty: all. */
    watchNamespaces: z.array(z.string().min(1)),
    /** IngressClass `bulwark` (controller bulwark.dev/gateway); mark it the cluster's default. */
    ingressClass: z.object({ default: z.boolean() }),
    /**
     * The checksum guard per kind: off, observe (verify and report what enforce would refuse,
     * refuse nothing) or enforce (updates wait for a matching IngressCheckSum / SecretCheckSum;
     * true/false mean enforce/off), and the namespaces where checksum objects are trusted (the
     * only ones a policy lets them be made in).
     */
    checksum: z.object({
      ingress: guardMode,
      secret: guardMode,
      publisherNamespaces: z.array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)).min(1),
      /** Only checksum objects signed by a key in keysConfigMap (in the release namespace) count. */
      requireSignature: z.boolean(),
      keysConfigMap: z.string().regex(/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/),
    }),
    /** The last good configuration on disk (a PersistentVolumeClaim per ordinal), else an emptyDir. */
    persistence: z.object({
      enabled: z.boolean(),
      size: quantity,
      storageClassName: z.string().optional(),
    }),
    resources: resourcesSchema,
  }),
  permissionServer: z.object({
    enabled: z.boolean(),
    replicas: z.int().min(1),
    /** One port for the API, /healthz and /metrics. */
    port,
    /**
     * HTTPS from a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) for the Service's name
     * `bulwark-permission-server.<namespace>.svc`, made by cert-manager or `bulwark permission
     * tls`. The Pepr module reads its ca.crt and gives it to every injected init container, which
     * then trusts only that CA. Off: plain HTTP (tokens cross the pod network in clear).
     */
    tls: z.object({ enabled: z.boolean(), secretName: z.string().min(1) }),
    /** The audience the init client's projected token is minted for. */
    audience: z.string().min(1),
    /** PermissionProviders the install creates. */
    providers: z.array(providerSchema),
    resources: resourcesSchema,
  }),
  edgeHealth: z.object({
    enabled: z.boolean(),
    /** The daemons' port on every edge node (host network): results from peers, and /healthz. */
    port,
    /** Where each daemon serves /metrics on its node (host network); not the peer port. */
    metricsPort: port,
    nodeSelector: z.record(z.string(), z.string()),
    tolerations: z.array(tolerationSchema),
    /**
     * The Secret (in `namespace`) holding the HMAC key the daemons sign with, mounted as a file;
     * the install never writes it: `kubectl -n bulwark-system create secret generic
     * bulwark-edge-health-hmac --from-literal=hmackey=$(openssl rand -hex 32)`.
     */
    hmacSecret: z.object({ name: z.string().min(1), key: z.string().min(1) }),
    /**
     * The daemon's check plugins, each `key=value,...` over its defaults or `off`; empty keeps the
     * default (daemon and kubelet checks at weight 0.5 each, no TCP check). Peers must still be
     * able to reach the score line: with the kubelet check off, give the daemon check weight=1.
     */
    checks: z
      .object({
        /** BULWARK_EDGE_CHECK_DAEMON */
        daemon: z.string(),
        /** BULWARK_EDGE_CHECK_KUBELET */
        kubelet: z.string(),
        /** BULWARK_EDGE_CHECK_TCP */
        tcp: z.string(),
        /**
         * A file on every edge node holding the CA that signed the kubelets' serving certificates
         * (often /etc/kubernetes/pki/ca.crt), mounted read-only and given as the kubelet check's
         * ca-file; empty leaves kubelet certificates unverified, as SuperEdge does.
         */
        kubeletCaHostPath: z
          .string()
          .regex(/^(\/.*)?$/, { message: "must be an absolute path or empty" }),
      })
      .superRefine((checks, ctx) => {
        if (checks.kubeletCaHostPath === "") return;
        if (checks.kubelet.trim() === "off") {
          ctx.addIssue({
            code: "custom",
            path: ["kubeletCaHostPath"],
            message: "is set but the kubelet check is off",
          });
        } else if (/(^|,)\s*ca-file\s*=/.test(checks.kubelet)) {
          ctx.addIssue({
            code: "custom",
            path: ["kubelet"],
            message: "names a ca-file while kubeletCaHostPath sets one; keep one",
          });
        }
      }),
    /**
     * Whose daemons vote: Bulwark's (BULWARK_EDGE_VOTES=bulwark, votes with a term) or SuperEdge's
     * own (superedge: `nodeunhealth`, fresh while their pods on the node's peers are live), for a
     * site that swaps the webhook first and the daemons later.
     */
    votes: z.enum(["bulwark", "superedge"]),
    zones: z.object({
      /** Where edge-health-zone-config lives (kube-system, where SuperEdge reads it). */
      configNamespace: z.string().min(1),
      /** Write edge-health-zone-config; off when SuperEdge or an operator already manages it. */
      manageConfig: z.boolean(),
      /** TaintZoneAdmission: votes count only inside a node's superedgehealth/topology-zone. */
      taintZoneAdmission: z.boolean(),
      maxUnknownSeconds: z.int().min(1).optional(),
    }),
    resources: resourcesSchema,
  }),
});
export type BulwarkValues = z.infer<typeof valuesSchema>;

export function defaultValues(image: string = DEFAULT_IMAGE): BulwarkValues {
  return {
    namespace: DEFAULT_NAMESPACE,
    image,
    imagePullPolicy: "IfNotPresent",
    metrics: { scrape: true },
    gateway: {
      enabled: true,
      replicas: 2,
      ordinalStart: 0,
      ports: { http: 8080, https: 8443, admin: 9090 },
      service: { type: "LoadBalancer", http: 80, https: 443 },
      workers: 2,
      watchNamespaces: [],
      ingressClass: { default: false },
      checksum: {
        ingress: "observe",
        secret: "observe",
        publisherNamespaces: ["bulwark-system"],
        requireSignature: false,
        keysConfigMap: "bulwark-checksum-keys",
      },
      persistence: { enabled: true, size: "1Gi" },
      resources: {
        requests: { cpu: "200m", memory: "256Mi" },
        limits: { cpu: "2", memory: "1536Mi" },
      },
    },
    permissionServer: {
      enabled: true,
      replicas: 2,
      port: 8443,
      tls: { enabled: true, secretName: "bulwark-permission-server-tls" },
      audience: "bulwark-permission-server",
      providers: [],
      resources: {
        requests: { cpu: "100m", memory: "128Mi" },
        limits: { cpu: "1", memory: "512Mi" },
      },
    },
    edgeHealth: {
      enabled: true,
      port: 51005,
      metricsPort: 51006,
      nodeSelector: { "superedge.io/node-edge": "enable" },
      tolerations: [{ operator: "Exists" }],
      hmacSecret: { name: "bulwark-edge-health-hmac", key: "hmackey" },
      checks: { daemon: "", kubelet: "", tcp: "", kubeletCaHostPath: "" },
      votes: "bulwark",
      zones: {
        configNamespace: "kube-system",
        manageConfig: false,
        taintZoneAdmission: false,
      },
      resources: {
        requests: { cpu: "20m", memory: "64Mi" },
        limits: { cpu: "200m", memory: "256Mi" },
      },
    },
  };
}

/** Checks values (e.g. defaults with overrides); every problem names its field by path. */
export function parseValues(raw: unknown): Result<BulwarkValues> {
  const parsed = valuesSchema.safeParse(raw);
  if (parsed.success) return ok(parsed.data);
  const errors: FieldError[] = parsed.error.issues.map(issue => ({
    field: issue.path.map(String).join("."),
    message: issue.message,
  }));
  return fail(errors);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `override` over `base` as Helm merges a values file over the chart's: maps merge key by key,
 * anything else (lists included) replaces, and null removes the key.
 */
export function mergeValues(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override))
    return override === undefined ? base : override;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete merged[key];
    else merged[key] = mergeValues(base[key], value);
  }
  return merged;
}

/** The defaults for `image` with a values file's content (the chart's keys) over them, checked. */
export function valuesFrom(image: string, overrides: unknown): Result<BulwarkValues> {
  return parseValues(mergeValues(defaultValues(image), overrides ?? {}));
}
