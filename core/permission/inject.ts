// The CREATE-time injection plan for a pod that names a permission group: skip, deny, or the pod
// with Bulwark's init container first, a projected token, our finalizer and status "pending".
// Pure: the admission glue looks the group up, then applies the returned pod as its mutation.
import { z } from "zod";
import {
  PERMISSION_CLAIM_ANNOTATION,
  PERMISSION_GRANT_ANNOTATION,
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_REFUSAL_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
  POD_PERMISSION_FINALIZER,
} from "../names";
import { annotationPath } from "../annotations/family";
import type { Result } from "../result";
import { parseFields } from "./field-errors";
import type { Container, EnvVar, PermissionPod, Volume } from "./pod";
import { DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN } from "./spec";

export const INIT_CONTAINER_NAME = "bulwark-init";
export const TOKEN_VOLUME_NAME = "bulwark-token";
export const TOKEN_MOUNT_PATH = "/var/run/secrets/bulwark.dev/serviceaccount";
export const TOKEN_FILE = "token";
/** Where the init client reads its projected service-account token (also in BULWARK_TOKEN_PATH). */
export const TOKEN_PATH = `${TOKEN_MOUNT_PATH}/${TOKEN_FILE}`;
/** A non-root UID and GID for the init client (distroless "nonroot"). */
export const INIT_USER_ID = 65532;

export const INIT_ENV = {
  podName: "POD_NAME",
  podNamespace: "POD_NAMESPACE",
  podUid: "POD_UID",
  podIp: "POD_IP",
  group: "BULWARK_PERMISSION_GROUP",
  server: "BULWARK_PERMISSION_SERVER",
  tokenPath: "BULWARK_TOKEN_PATH",
  /** PEM: the CA that signs the permission server's certificate (replaces the default roots). */
  ca: "BULWARK_PERMISSION_CA",
  /** The same as a file, for callers that mount it themselves. */
  caPath: "BULWARK_PERMISSION_CA_PATH",
} as const;

/** Small: one HTTPS call and a wait. Limits keep namespaces with LimitRanges or quotas happy. */
export const INIT_RESOURCES = {
  requests: { cpu: "10m", memory: "64Mi" },
  limits: { cpu: "200m", memory: "128Mi" },
} as const;

/** The kubelet refuses projected tokens that expire in under 10 minutes or over 2^32 seconds. */
export const TOKEN_EXPIRATION = { min: 600, max: 2 ** 32 } as const;

export const injectConfigSchema = z
  .object({
    image: z.string().min(1),
    serverUrl: z.url({ protocol: /^https?$/ }),
    audience: z.string().min(1),
    tokenExpirationSeconds: z.int().min(TOKEN_EXPIRATION.min).max(TOKEN_EXPIRATION.max),
    ownNamespace: z.string().min(1),
    /**
     * PEM CA bundle for an https serverUrl, injected as BULWARK_PERMISSION_CA. An env var, not a
     * volume: a pod can mount ConfigMaps only from its own namespace, and the init container runs
     * once at start, so the bundle current at CREATE is the one it needs.
     */
    caBundle: z.string().min(1).optional(),
  })
  .refine(c => !c.caBundle || c.serverUrl.startsWith("https:"), {
    path: ["caBundle"],
    message: "a CA bundle needs an https:// serverUrl (plain http would verify nothing)",
  });
export type InjectConfig = z.infer<typeof injectConfigSchema>;

/** The module's injection settings, checked once at start-up. */
export function parseInjectConfig(raw: unknown): Result<InjectConfig> {
  return parseFields(injectConfigSchema, raw, "");
}

export type InjectDecision<P extends PermissionPod> =
  | { action: "skip"; reason: string }
  | { action: "deny"; reason: string }
  | { action: "inject"; group: string; pod: P };

function fieldEnv(name: string, fieldPath: string): EnvVar {
  return { name, valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } };
}

/** The init container for `group`, mounting the token from volume `volumeName`. */
export function bulwarkInitContainer(
  group: string,
  volumeName: string,
  config: InjectConfig,
): Container {
  return {
    name: INIT_CONTAINER_NAME,
    image: config.image,
    imagePullPolicy: "IfNotPresent",
    // The webhook cannot know the name or UID of a ReplicaSet's pod; the Downward API can.
    env: [
      fieldEnv(INIT_ENV.podName, "metadata.name"),
      fieldEnv(INIT_ENV.podNamespace, "metadata.namespace"),
      fieldEnv(INIT_ENV.podUid, "metadata.uid"),
      fieldEnv(INIT_ENV.podIp, "status.podIP"),
      { name: INIT_ENV.group, value: group },
      { name: INIT_ENV.server, value: config.serverUrl },
      { name: INIT_ENV.tokenPath, value: TOKEN_PATH },
      ...(config.caBundle ? [{ name: INIT_ENV.ca, value: config.caBundle }] : []),
    ],
    volumeMounts: [{ name: volumeName, mountPath: TOKEN_MOUNT_PATH, readOnly: true }],
    resources: {
      requests: { ...INIT_RESOURCES.requests },
      limits: { ...INIT_RESOURCES.limits },
    },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: INIT_USER_ID,
      runAsGroup: INIT_USER_ID,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
}

/** The projected token volume: a token for the permission server's audience only. */
export function tokenVolume(name: string, config: InjectConfig): Volume {
  return {
    name,
    projected: {
      sources: [
        {
          serviceAccountToken: {
            audience: config.audience,
            expirationSeconds: config.tokenExpirationSeconds,
            path: TOKEN_FILE,
          },
        },
      ],
    },
  };
}

/** `bulwark-token`, or `bulwark-token-2`, `-3`… when the pod already has a volume by that name. */
export function freeVolumeName(volumes: readonly Volume[] | undefined): string {
  const taken = new Set((volumes ?? []).map(v => v.name));
  let name = TOKEN_VOLUME_NAME;
  for (let n = 2; taken.has(name); n++) name = `${TOKEN_VOLUME_NAME}-${n}`;
  return name;
}

/**
 * Only our own init container says a pod was injected (a reinvoked webhook sees it). Bulwark's
 * annotations on a new pod say nothing: they were copied (a saved manifest, a tenant's), and are
 * replaced at injection.
 */
function alreadyInjected(pod: PermissionPod): string | undefined {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  if (containers.some(c => c.name === INIT_CONTAINER_NAME)) {
    return `pod already has a container named ${INIT_CONTAINER_NAME}`;
  }
  return undefined;
}

function groupProblem(group: string): string | undefined {
  if (group.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN_PATTERN.test(group)) return undefined;
  return `${annotationPath(PERMISSION_GROUP_ANNOTATION)}: ${JSON.stringify(group)} is not a PermissionGroup name (RFC 1123 subdomain)`;
}

function hostNetworkDenial(group: string): string {
  return (
    `${annotationPath(PERMISSION_GROUP_ANNOTATION)}: permission group ${JSON.stringify(group)} cannot be granted to a hostNetwork pod: ` +
    "its IP is the node's IP, so the grant would open the permission to every host-network pod on that node"
  );
}

/**
 * The init container's securityContext (runAsUser, seccomp, capabilities) is Linux-only, as is
 * its image: the API server would refuse the injected pod naming fields the user never wrote.
 */
function osProblem(pod: PermissionPod): string | undefined {
  const name = pod.spec?.os?.name;
  if (name === undefined || name === "linux") return undefined;
  return `spec.os.name: ${JSON.stringify(name)} pods cannot use permission groups: Bulwark's init container (${INIT_CONTAINER_NAME}) runs on Linux only`;
}

function injected<P extends PermissionPod>(pod: P, group: string, config: InjectConfig): P {
  const copy = structuredClone(pod);
  // Written through the structural view; every other field of P is carried over untouched.
  const view: PermissionPod = copy;
  const metadata = (view.metadata ??= {});
  const annotations = (metadata.annotations = { ...metadata.annotations });
  annotations[PERMISSION_STATUS_ANNOTATION] = "pending";
  // Only Bulwark writes grant records, claims and refusals, and only on a pod it works on: one on
  // a new pod is not ours.
  delete annotations[PERMISSION_GRANT_ANNOTATION];
  delete annotations[PERMISSION_CLAIM_ANNOTATION];
  delete annotations[PERMISSION_REFUSAL_ANNOTATION];
  const finalizers = metadata.finalizers ?? [];
  if (!finalizers.includes(POD_PERMISSION_FINALIZER)) {
    metadata.finalizers = [...finalizers, POD_PERMISSION_FINALIZER];
  }
  const spec = (view.spec ??= {});
  const volumeName = freeVolumeName(spec.volumes);
  spec.volumes = [...(spec.volumes ?? []), tokenVolume(volumeName, config)];
  // First, so it runs before mesh init containers (istio-init) redirect the pod's traffic.
  spec.initContainers = [
    bulwarkInitContainer(group, volumeName, config),
    ...(spec.initContainers ?? []),
  ];
  return copy;
}

/**
 * What to do with a pod at CREATE admission. `namespace` is the admission request's: a
 * ReplicaSet's pods have no metadata.namespace (nor a name) yet. Existing containers are never
 * changed; the returned pod is a copy.
 */
export function planInjection<P extends PermissionPod>(
  pod: P,
  namespace: string,
  config: InjectConfig,
): InjectDecision<P> {
  const group = pod.metadata?.annotations?.[PERMISSION_GROUP_ANNOTATION];
  if (group === undefined) {
    return { action: "skip", reason: `no ${PERMISSION_GROUP_ANNOTATION} annotation` };
  }
  if (namespace === config.ownNamespace) {
    return {
      action: "skip",
      reason: `pods in Bulwark's own namespace ${namespace} are not injected`,
    };
  }
  const injectedReason = alreadyInjected(pod);
  if (injectedReason) return { action: "skip", reason: injectedReason };
  const problem = groupProblem(group);
  if (problem) return { action: "deny", reason: problem };
  if (pod.spec?.hostNetwork === true) return { action: "deny", reason: hostNetworkDenial(group) };
  const os = osProblem(pod);
  if (os) return { action: "deny", reason: os };
  return { action: "inject", group, pod: injected(pod, group, config) };
}
