// The settings a cluster's Bulwark install is made from. The same keys, with the same defaults, are
// the Helm chart's values (charts/bulwark/values.yaml); `npm run build` uses the defaults with the
// image it is given. One zod schema checks them, so a bad value names its field, and it is the one
// source of the chart's values.schema.json (descriptions included): strict wherever that schema
// says additionalProperties false, so `npm run build --values` refuses what Helm refuses.
import { parseRanges } from "../../core/net/ranges";
import { z } from "zod";
import packageJson from "../../package.json";
import { fail, ok, type FieldError, type Result } from "../../core/result";
import { GUARD_MODES } from "../../core/checksum";
import { releasePrefix } from "../../core/names";
import { LISTEN_MODES } from "../../gateway/listen-mode";

/** The image a build names when it is given none: the published one for this package's version. */
export const DEFAULT_IMAGE = `ghcr.io/bulwark-dev/bulwark:${packageJson.version}`;
export const DEFAULT_NAMESPACE = "bulwark-system";
/** The release name `npm run build` assumes (as `helm install bulwark ...`): names stay bulwark-*. */
export const DEFAULT_RELEASE = "bulwark";
/** Longest name prefix: `<prefix>-gateway` must leave room for a StatefulSet's revision label. */
export const MAX_FULLNAME = 40;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** prometheus-operator's Duration (its CRDs' pattern), or empty. */
const PROMETHEUS_DURATION =
  /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)?$/;

const QUANTITY_PATTERN = /^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/;
/**
 * A Kubernetes quantity. YAML reads `cpu: 2` as a number, which Kubernetes and the chart's schema
 * take; strings must have a quantity's form.
 */
export const quantity = z.union([
  z.string().regex(QUANTITY_PATTERN, {
    message: "must be a Kubernetes quantity such as 100m, 256Mi or 1",
  }),
  z.number().min(0),
]);
const cpuMemory = (what: string) =>
  z.strictObject({
    cpu: quantity.describe(`CPU ${what} (a quantity: 100m, 1).`),
    memory: quantity.describe(`Memory ${what} (a quantity: 256Mi, 1Gi).`),
  });
const resourcesSchema = z
  .strictObject({
    requests: cpuMemory("request").describe("What the scheduler reserves for the container."),
    limits: cpuMemory("limit").describe("What the container may use at most."),
  })
  .describe("The container's resources.requests and resources.limits.");
export type Resources = z.infer<typeof resourcesSchema>;

const port = z.int().min(1).max(65535);
/** The gateway's BULWARK_*_CHECKSUM: the three modes, or the old booleans. */
const guardMode = z.union([z.enum(GUARD_MODES), z.boolean()]);
const labelMap = z.record(z.string(), z.string());
const anyObject = z.record(z.string(), z.unknown());

const tolerationSchema = z.strictObject({
  key: z.string().optional().describe("The taint key to tolerate; empty with Exists: every taint."),
  operator: z.enum(["Exists", "Equal"]).optional().describe("Exists or Equal (the default)."),
  value: z.string().optional().describe("The taint value, with Equal."),
  effect: z
    .enum(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    .optional()
    .describe("The taint effect to tolerate; empty: every effect."),
  tolerationSeconds: z
    .int()
    .optional()
    .describe("With NoExecute: how long the pod stays bound after the taint appears."),
});
export type Toleration = z.infer<typeof tolerationSchema>;

/** A Kubernetes LabelSelector; empty ({}) selects everything. */
const labelSelectorSchema = (what: string) =>
  z
    .strictObject({
      matchLabels: labelMap.optional().describe("Labels the selected objects carry, all of them."),
      matchExpressions: z
        .array(
          z.strictObject({
            key: z.string().min(1).describe("The label key."),
            operator: z
              .enum(["In", "NotIn", "Exists", "DoesNotExist"])
              .describe("How the key's value is matched."),
            values: z.array(z.string()).optional().describe("With In and NotIn: the values."),
          }),
        )
        .optional()
        .describe("Label requirements, all of them."),
    })
    .describe(`${what} (a LabelSelector; {}: every one).`);
export type LabelSelector = z.infer<ReturnType<typeof labelSelectorSchema>>;

/** A PermissionProvider the install creates (cluster-scoped): its name and spec, as in the CRD. */
const providerSchema = z.strictObject({
  name: z
    .string()
    .regex(DNS_SUBDOMAIN, { message: "must be a DNS name" })
    .describe("The PermissionProvider's name (cluster-scoped: unique across releases)."),
  spec: anyObject.describe("Its spec, as the PermissionProvider CRD defines it."),
});

/**
 * Where and how a workload's pods run, and what the workload object and its pods carry besides
 * the chart's own labels (which win over these, since selectors depend on them).
 */
function placement(workload: string, builtIn: { affinity?: string; spread?: string } = {}) {
  return {
    nodeSelector: labelMap.describe(`Node labels the ${workload}'s pods must match.`),
    tolerations: z
      .array(tolerationSchema)
      .describe(`Taints the ${workload}'s pods tolerate (pod spec tolerations).`),
    affinity: anyObject.describe(
      `The ${workload}'s pod affinity (a Kubernetes Affinity)` +
        (builtIn.affinity ? `; empty: ${builtIn.affinity}, a non-empty one replaces it.` : "."),
    ),
    topologySpreadConstraints: z
      .array(anyObject)
      .describe(
        `The ${workload}'s pod topologySpreadConstraints` +
          (builtIn.spread ? `; empty: ${builtIn.spread}, a non-empty list replaces it.` : "."),
      ),
    priorityClassName: z
      .string()
      .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$/, { message: "must be a DNS name or empty" })
      .describe(`The ${workload}'s pods' PriorityClass; empty: none.`),
    labels: labelMap.describe(`Labels on the ${workload}'s workload object.`),
    annotations: labelMap.describe(`Annotations on the ${workload}'s workload object.`),
    podLabels: labelMap.describe(`Labels on the ${workload}'s pods.`),
    podAnnotations: labelMap.describe(
      `Annotations on the ${workload}'s pods (e.g. for a service mesh or a log shipper).`,
    ),
  };
}
export interface Placement {
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  affinity: Record<string, unknown>;
  topologySpreadConstraints: Record<string, unknown>[];
  priorityClassName: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  podLabels: Record<string, string>;
  podAnnotations: Record<string, string>;
}

const gatewaySchema = z
  .strictObject({
    enabled: z.boolean().describe("Run the gateway (StatefulSet, Services, IngressClass, PDB)."),
    replicas: z.int().min(1).describe("Gateway pods."),
    ordinalStart: z
      .int()
      .min(0)
      .describe(
        "The StatefulSet's first ordinal (spec.ordinals.start): pods are <name>-<start> .. <start+replicas-1>.",
      ),
    ports: z
      .strictObject({
        http: port.describe("The container's plain HTTP port."),
        https: port.describe("The container's HTTPS port."),
        admin: port.describe("The container's /healthz, /readyz and /metrics port."),
      })
      .describe("The gateway container's ports."),
    service: z
      .strictObject({
        type: z
          .enum(["LoadBalancer", "ClusterIP", "NodePort"])
          .describe("The traffic Service's type."),
        http: port.describe("The Service's HTTP port."),
        https: port.describe("The Service's HTTPS port."),
        annotations: labelMap.describe(
          "Annotations on the traffic Service (a cloud load balancer's settings, external-dns).",
        ),
        externalTrafficPolicy: z
          .enum(["Local", "Cluster"])
          .describe(
            "LoadBalancer and NodePort only (ClusterIP has none): Local keeps client addresses and sends traffic only to nodes with a gateway pod; Cluster spreads it over every node, source NATed.",
          ),
      })
      .describe("The Service that takes the traffic (the headless one is for the pods)."),
    workers: z
      .int()
      .min(1)
      .max(64)
      .describe("Worker processes of the data plane (BULWARK_WORKERS); match the CPU limit."),
    listenMode: z
      .enum(LISTEN_MODES)
      .describe(
        "How the workers share the ports (BULWARK_LISTEN_MODE): round-robin (the primary accepts and hands connections out) or reuse-port (a socket per worker, SO_REUSEPORT; round robin on a Node.js without it).",
      ),
    watchNamespaces: z
      .array(z.string().min(1))
      .describe("Namespaces to serve Ingresses from (BULWARK_WATCH_NAMESPACES); empty: all."),
    trustedProxies: z
      .array(
        z.string().refine(entry => parseRanges(entry).ok, {
          error: issue => `${JSON.stringify(issue.input)} is neither an IP address nor a CIDR`,
        }),
      )
      .describe(
        "Load balancers or proxies in front of the gateway, as CIDRs or addresses (BULWARK_TRUSTED_PROXIES): their X-Forwarded-For names the client for source ranges, X-Real-IP and the log. Empty: the TCP peer is the client.",
      ),
    proxyProtocol: z
      .boolean()
      .describe(
        "Every connection starts with a PROXY protocol v1/v2 header from the load balancer (BULWARK_PROXY_PROTOCOL); its source address is the client's. Connections without one are closed.",
      ),
    http2: z
      .boolean()
      .describe(
        'The HTTPS listener offers HTTP/2 by ALPN next to HTTP/1.1 (BULWARK_HTTP2); an Ingress\'s bulwark.dev/http2: "false" turns it off for its hosts.',
      ),
    http2Cleartext: z
      .boolean()
      .describe(
        "The HTTP port also serves h2c to clients with prior knowledge (BULWARK_HTTP2_CLEARTEXT), with the same limits as HTTP/2 on the HTTPS listener; Upgrade: h2c is never honoured (answered as HTTP/1.1).",
      ),
    limitStatus: z
      .int()
      .min(400)
      .max(599)
      .describe(
        "The status answering requests over limit-rps, limit-rpm or limit-connections (BULWARK_LIMIT_STATUS; ingress-nginx's limit-req-status-code).",
      ),
    authConnectTimeoutSeconds: z
      .int()
      .min(1)
      .max(600)
      .describe(
        "Seconds to connect to an Ingress's auth-url (BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS); past it the request is answered 500.",
      ),
    authReadTimeoutSeconds: z
      .int()
      .min(1)
      .max(600)
      .describe(
        "Seconds for auth-url's answer once connected (BULWARK_AUTH_READ_TIMEOUT_SECONDS); past it the request is answered 500.",
      ),
    ingressClass: z
      .strictObject({
        create: z
          .boolean()
          .describe(
            "Create IngressClass bulwark (controller bulwark.dev/gateway). It is cluster-scoped and its name is fixed: a second release with a gateway sets false.",
          ),
        default: z
          .boolean()
          .describe("Mark IngressClass bulwark the cluster's default (and tell the Pepr module)."),
      })
      .describe("The IngressClass the gateway serves."),
    checksum: z
      .strictObject({
        ingress: guardMode.describe(
          "The checksum guard for Ingresses: off, observe (verify and report what enforce would refuse, refuse nothing) or enforce (an update that matches no IngressCheckSum is refused, the last good configuration keeps serving); true/false mean enforce/off.",
        ),
        secret: guardMode.describe(
          "The checksum guard for TLS Secrets (SecretCheckSum), as for ingress.",
        ),
        publisherNamespaces: z
          .array(z.string().regex(DNS_LABEL))
          .min(1)
          .describe(
            "Where checksum objects are trusted; a ValidatingAdmissionPolicy refuses them anywhere else.",
          ),
        requireSignature: z
          .boolean()
          .describe("Only checksum objects signed by a key in keysConfigMap count."),
        keysConfigMap: z
          .string()
          .regex(/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/)
          .describe("The ConfigMap (release namespace) of trusted signing keys."),
      })
      .describe("The checksum guard, for the gateway and the Pepr module."),
    persistence: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "Keep the last good configuration on a PersistentVolumeClaim per ordinal; off: an emptyDir.",
          ),
        size: quantity.describe("Each claim's size."),
        storageClassName: z
          .string()
          .optional()
          .describe("The claims' StorageClass; unset: the default."),
      })
      .describe("Where the gateway keeps its last good configuration."),
    resources: resourcesSchema,
    ...placement("gateway", {
      affinity: "prefer one gateway pod per node (podAntiAffinity on kubernetes.io/hostname)",
    }),
  })
  .describe("The L7 gateway: a StatefulSet serving Ingresses of class bulwark.");

const permissionServerSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .describe(
        "Run the permission server (and the pod metadata policy). One release per cluster: the Pepr module calls one.",
      ),
    replicas: z.int().min(1).describe("Permission server pods."),
    port: port.describe(
      "The API's port, with /healthz (the probes) and /metrics, HTTPS when tls.enabled.",
    ),
    metricsPort: port.describe(
      "Plain-HTTP /metrics only (BULWARK_PERMISSION_METRICS_PORT, container port metrics): what the scrape annotations and the PodMonitor name, no CA needed.",
    ),
    tls: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "Serve HTTPS from secretName; off: plain HTTP (tokens cross the pod network in clear).",
          ),
        secretName: z
          .string()
          .describe(
            "A kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) for <prefix>-permission-server.<namespace>.svc, by bulwark install secrets or cert-manager; the module injects its ca.crt into init containers. Empty: <prefix>-permission-server-tls.",
          ),
      })
      .describe("The permission server's TLS."),
    audience: z
      .string()
      .min(1)
      .describe("The audience the init container's projected token is minted for."),
    providers: z
      .array(providerSchema)
      .describe("PermissionProviders the install creates (cluster-scoped)."),
    resources: resourcesSchema,
    ...placement("permission server", {
      spread: "spread over nodes (maxSkew 1 on kubernetes.io/hostname, ScheduleAnyway)",
    }),
  })
  .describe("The permission server: a Deployment the injected init containers call.");

const checksSchema = z
  .strictObject({
    daemon: z.string().describe("BULWARK_EDGE_CHECK_DAEMON: key=value,... or off."),
    kubelet: z.string().describe("BULWARK_EDGE_CHECK_KUBELET: key=value,... or off."),
    tcp: z.string().describe("BULWARK_EDGE_CHECK_TCP: key=value,... or off."),
    kubeletCaHostPath: z
      .string()
      .regex(/^(\/.*)?$/, { message: "must be an absolute path or empty" })
      .describe(
        "A file on every edge node with the CA of the kubelets' serving certificates (often /etc/kubernetes/pki/ca.crt), mounted as the kubelet check's ca-file; empty leaves them unverified, as SuperEdge does.",
      ),
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
  })
  .describe(
    "The daemon's check plugins, each key=value,... over its defaults or off; empty keeps the default (daemon and kubelet checks at weight 0.5 each, no TCP check). With the kubelet check off, give the daemon check weight=1.",
  );

const edgeHealthSchema = z
  .strictObject({
    enabled: z.boolean().describe("Run the edge-health daemons (DaemonSet)."),
    port: port.describe(
      "The daemons' port on every edge node (host network): results from peers, and /healthz.",
    ),
    metricsPort: port.describe("Where each daemon serves /metrics on its node (host network)."),
    hmacSecret: z
      .strictObject({
        name: z
          .string()
          .describe(
            "The Secret (release namespace); the chart never writes it. Empty: <prefix>-edge-health-hmac.",
          ),
        key: z.string().min(1).describe("Its key holding the HMAC key."),
      })
      .describe(
        "The HMAC key the daemons sign with, mounted as a file; bulwark install secrets makes it (docs/install.md).",
      ),
    checks: checksSchema,
    votes: z
      .enum(["bulwark", "superedge"])
      .describe(
        "Whose daemons vote: bulwark (votes with a term) or superedge (SuperEdge's own daemons' nodeunhealth annotation), for a site that swaps the webhook first and the daemons later.",
      ),
    zones: z
      .strictObject({
        configNamespace: z
          .string()
          .min(1)
          .describe("Where edge-health-zone-config lives (kube-system, where SuperEdge reads it)."),
        manageConfig: z
          .boolean()
          .describe(
            "Write edge-health-zone-config (a fixed name: one release per cluster); off when SuperEdge or an operator manages it.",
          ),
        taintZoneAdmission: z
          .boolean()
          .describe(
            "TaintZoneAdmission: votes count only inside a node's superedgehealth/topology-zone.",
          ),
        maxUnknownSeconds: z
          .int()
          .min(1)
          .optional()
          .describe("MaxUnknownSeconds: how long a voted-healthy Unknown node keeps its pods."),
      })
      .describe("SuperEdge's zone ConfigMap."),
    resources: resourcesSchema,
    ...placement("edge-health daemon"),
  })
  .describe("The edge-health daemon: a DaemonSet on edge nodes, on the host network.");

/** The chart's values: what values.schema.json is made from (the namespace is the release's). */
export const chartValuesSchema = z
  .strictObject({
    global: anyObject
      .optional()
      .describe("Helm's global values, when Bulwark is a subchart; Bulwark reads none of them."),
    fullnameOverride: z
      .string()
      .max(MAX_FULLNAME)
      .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, { message: "must be a DNS label or empty" })
      .describe(
        'The prefix of the names the chart gives its objects (<prefix>-gateway, <prefix>-permission-server...). Empty: the release name when it contains "bulwark", else <release>-bulwark.',
      ),
    image: z
      .string()
      .min(1)
      .describe(
        "The one image every workload runs, and the Pepr module injects as the init container.",
      ),
    imagePullPolicy: z
      .enum(["Always", "IfNotPresent", "Never"])
      .describe("The workloads' imagePullPolicy."),
    imagePullSecrets: z
      .array(
        z.strictObject({ name: z.string().min(1).describe("A Secret in the release namespace.") }),
      )
      .describe(
        "Secrets (kubernetes.io/dockerconfigjson, release namespace) to pull the image with, for every workload. Not for the injected init container: see the chart README.",
      ),
    commonLabels: labelMap.describe(
      "Labels on every object the chart makes, and on the pods; the chart's own labels win.",
    ),
    metrics: z
      .strictObject({
        modulePort: z
          .int()
          .min(0)
          .max(65535)
          .describe(
            "Where the Pepr module's watcher serves the checksum guard's metrics (BULWARK_METRICS_PORT, container port bulwark-metrics); 0: not served.",
          ),
        scrape: z
          .boolean()
          .describe(
            "prometheus.io/scrape, port, path (and scheme) on the pods that serve /metrics.",
          ),
        podMonitor: z
          .strictObject({
            enabled: z
              .boolean()
              .describe(
                "A PodMonitor (prometheus-operator, monitoring.coreos.com/v1) per workload; its CRD must be installed.",
              ),
            interval: z
              .string()
              .regex(PROMETHEUS_DURATION, { message: "must be a Prometheus duration such as 30s" })
              .describe("How often Prometheus scrapes the pods (30s, 1m); empty: its default."),
            labels: labelMap.describe(
              "Labels on the PodMonitors, for the Prometheus' podMonitorSelector (e.g. release: kube-prometheus-stack).",
            ),
          })
          .describe(
            "PodMonitors for the prometheus-operator, instead of or beside the scrape annotations.",
          ),
      })
      .describe("Metrics scraping."),
    networkPolicy: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "A NetworkPolicy (ingress) for the gateway and one for the permission server; the network plugin must enforce them. The edge-health daemons run on the host network, which NetworkPolicies do not apply to: none for them.",
          ),
        metrics: z
          .strictObject({
            namespaceSelector: labelSelectorSchema("The namespaces that may scrape"),
            podSelector: labelSelectorSchema("The pods in them that may scrape"),
          })
          .describe(
            "Who may reach the gateway's admin port and the permission server's metrics port (e.g. namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}); the defaults let every pod in.",
          ),
      })
      .describe(
        "NetworkPolicies: the gateway's HTTP and HTTPS ports stay open to all; the permission server's API port admits only pods the Pepr module injected (label permission.bulwark.dev/managed=true, any namespace) and the Pepr module's namespace pepr-system.",
      ),
    gateway: gatewaySchema,
    permissionServer: permissionServerSchema,
    edgeHealth: edgeHealthSchema,
  })
  .describe("Bulwark's workloads: the gateway, the permission server and the edge-health daemon.");
export type ChartValues = z.infer<typeof chartValuesSchema>;

/** The release's fullname: the prefix of every name the install gives (bulwark.fullname). */
export function fullname(values: { release: string; fullnameOverride: string }): string {
  return releasePrefix(values.release, values.fullnameOverride);
}

/** The chart's values with what Helm takes from the command line: the namespace and release. */
export const valuesSchema = chartValuesSchema
  .extend({
    namespace: z
      .string()
      .regex(DNS_LABEL, { message: "must be a DNS label" })
      .describe("The release namespace (helm -n)."),
    release: z
      .string()
      .max(53)
      .regex(DNS_LABEL, { message: "must be a DNS label" })
      .describe("The release name (helm install RELEASE)."),
  })
  .superRefine((values, ctx) => {
    const name = fullname(values);
    if (name.length > MAX_FULLNAME) {
      ctx.addIssue({
        code: "custom",
        path: ["fullnameOverride"],
        message: `the names' prefix ${name} (from the release name) is longer than ${MAX_FULLNAME} characters; set a shorter fullnameOverride`,
      });
    }
  });
export type BulwarkValues = z.infer<typeof valuesSchema>;

function noPlacement(): Placement {
  return {
    nodeSelector: {},
    tolerations: [],
    affinity: {},
    topologySpreadConstraints: [],
    priorityClassName: "",
    labels: {},
    annotations: {},
    podLabels: {},
    podAnnotations: {},
  };
}

/** The chart's defaults (charts/bulwark/values.yaml). */
export function defaultChartValues(image: string = DEFAULT_IMAGE): ChartValues {
  return {
    fullnameOverride: "",
    image,
    imagePullPolicy: "IfNotPresent",
    imagePullSecrets: [],
    commonLabels: {},
    metrics: {
      modulePort: 9464,
      scrape: true,
      podMonitor: { enabled: false, interval: "", labels: {} },
    },
    networkPolicy: {
      enabled: false,
      metrics: { namespaceSelector: {}, podSelector: {} },
    },
    gateway: {
      enabled: true,
      replicas: 2,
      ordinalStart: 0,
      ports: { http: 8080, https: 8443, admin: 9090 },
      service: {
        type: "LoadBalancer",
        http: 80,
        https: 443,
        annotations: {},
        externalTrafficPolicy: "Local",
      },
      workers: 2,
      listenMode: "round-robin",
      watchNamespaces: [],
      trustedProxies: [],
      proxyProtocol: false,
      http2: true,
      http2Cleartext: false,
      limitStatus: 503,
      authConnectTimeoutSeconds: 5,
      authReadTimeoutSeconds: 15,
      ingressClass: { create: true, default: false },
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
      ...noPlacement(),
    },
    permissionServer: {
      enabled: true,
      replicas: 2,
      port: 8443,
      metricsPort: 9465,
      tls: { enabled: true, secretName: "" },
      audience: "bulwark-permission-server",
      providers: [],
      resources: {
        requests: { cpu: "100m", memory: "128Mi" },
        limits: { cpu: "1", memory: "512Mi" },
      },
      ...noPlacement(),
    },
    edgeHealth: {
      enabled: true,
      port: 51005,
      metricsPort: 51006,
      hmacSecret: { name: "", key: "hmackey" },
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
      ...noPlacement(),
      nodeSelector: { "superedge.io/node-edge": "enable" },
      tolerations: [{ operator: "Exists" }],
      // Votes must go on while the node is cut off, so outrank ordinary pods.
      priorityClassName: "system-node-critical",
    },
  };
}

/** Where the install goes, as `helm install RELEASE -n NAMESPACE` says. */
export interface Install {
  namespace: string;
  release: string;
}

export function defaultValues(
  image: string = DEFAULT_IMAGE,
  install: Partial<Install> = {},
): BulwarkValues {
  return {
    namespace: install.namespace ?? DEFAULT_NAMESPACE,
    release: install.release ?? DEFAULT_RELEASE,
    ...defaultChartValues(image),
  };
}

/** zod's issues as FieldErrors; each unknown key is its own error, named by its path. */
function fieldErrors(issues: z.core.$ZodIssue[]): FieldError[] {
  return issues.flatMap(issue => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map(key => ({
        field: [...at, key].join("."),
        message: "is not a value of the chart (its values.schema.json refuses it too)",
      }));
    }
    return [{ field: at.join("."), message: issue.message }];
  });
}

/** Checks values (e.g. defaults with overrides); every problem names its field by path. */
export function parseValues(raw: unknown): Result<BulwarkValues> {
  const parsed = valuesSchema.safeParse(raw);
  return parsed.success ? ok(parsed.data) : fail(fieldErrors(parsed.error.issues));
}

/** Checks the chart's values alone, as Helm does with values.schema.json. */
export function parseChartValues(raw: unknown): Result<ChartValues> {
  const parsed = chartValuesSchema.safeParse(raw);
  return parsed.success ? ok(parsed.data) : fail(fieldErrors(parsed.error.issues));
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

/** What to say of a values file's `namespace` or `release`: Helm takes them from its command line. */
const INSTALL_KEYS: Record<string, string> = {
  namespace: "is the release's, not a value: --namespace NS (helm install -n NS)",
  release: "is not a value: --release NAME (helm install NAME)",
};

/**
 * A values file's content (the chart's keys) over the chart's defaults for `image`, checked as
 * Helm checks them (the chart's schema, which refuses unknown keys), then placed at `install`.
 */
export function valuesFrom(
  image: string,
  overrides: unknown,
  install: Partial<Install> = {},
): Result<BulwarkValues> {
  const merged = mergeValues(defaultChartValues(image), overrides ?? {});
  const chart = parseChartValues(merged);
  if (!chart.ok) {
    return fail(
      chart.errors.map(e => ({ field: e.field, message: INSTALL_KEYS[e.field] ?? e.message })),
    );
  }
  return parseValues({
    ...chart.value,
    namespace: install.namespace ?? DEFAULT_NAMESPACE,
    release: install.release ?? DEFAULT_RELEASE,
  });
}
