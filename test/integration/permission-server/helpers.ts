// What the permission-server tests share: real permission servers (in this process, one or
// more replicas) against the shared control plane, PermissionProviders and groups, pods that
// look started (an IP set through the status subresource, as kubelet would), their bound
// tokens from the TokenRequest API, and the real init client run for them.
import { CustomObjectsApi, type V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import type { PermissionProviderSpec } from "../../../core/permission";
import { runInit, type InitResult } from "../../../init/client";
import { trustingFetch } from "../../../kube/trusting-fetch";
import { loadInitSettings } from "../../../init/settings";
import { providerBuilder } from "../../../permission-server/providers/build";
import { createLogger } from "../../../kube/log";
import { startServer, type RunningServer } from "../../../permission-server/server";
import { loadSettings } from "../../../permission-server/settings";
import type { Kube } from "../../../permission-server/kube";
import { startAuthzApi, type AuthzApi, type AuthzApiOptions } from "../../harness/authz-api";
import type { TestCluster } from "../../harness/cluster";
import { isNotFound } from "../../../kube/api-errors";

export const AUDIENCE = "bulwark-permission-server";
export const GROUP_ANNOTATION = "permission.bulwark.dev/group";
const BULWARK = { group: "bulwark.dev", version: "v1alpha1" } as const;

/** Seconds-scale timing, so breakers, backoffs and outages fit in a test. */
export const FAST_SETTINGS: Record<string, string> = {
  BULWARK_BACKOFF_DURATION: "500ms",
  BULWARK_BACKOFF_FACTOR: "2",
  BULWARK_BACKOFF_JITTER: "1",
  BULWARK_BACKOFF_STEPS: "5",
  BULWARK_BACKOFF_CAP: "10s",
  BULWARK_PROVIDER_BREAKER_FAILURES: "3",
  BULWARK_PROVIDER_BREAKER_OPEN: "1s",
  BULWARK_GRANT_TIMEOUT: "5s",
  BULWARK_POLL_INTERVAL: "200ms",
  BULWARK_RETRY_INTERVAL: "200ms",
  BULWARK_RETRY_MAX_INTERVAL: "1s",
  BULWARK_CLAIM_TTL: "5s",
  BULWARK_LONG_POLL_MAX: "5s",
  BULWARK_PRUNE_INTERVAL: "2s",
};

/** `count` replicas sharing the breaker ConfigMap in `namespace`. */
export function startReplicas(
  cluster: TestCluster,
  namespace: string,
  count: number,
  env: Record<string, string> = {},
): Promise<RunningServer[]> {
  return startRoutedReplicas(cluster, namespace, { count, env });
}

/** Replicas as above; `route` may change the provider spec a replica builds from. */
export async function startRoutedReplicas(
  cluster: TestCluster,
  namespace: string,
  options: {
    count: number;
    env?: Record<string, string>;
    route?: (replica: number, spec: PermissionProviderSpec) => PermissionProviderSpec;
    /** The API clients a replica uses (a test injects faults through them). */
    kube?: Kube;
  },
): Promise<RunningServer[]> {
  const { count, env = {}, route = (_, spec) => spec } = options;
  const servers: RunningServer[] = [];
  for (let i = 0; i < count; i++) {
    const loaded = loadSettings(
      {
        ...FAST_SETTINGS,
        KUBECONFIG: cluster.kubeconfigPath,
        BULWARK_NAMESPACE: namespace,
        BULWARK_PERMISSION_PORT: "0",
        BULWARK_PERMISSION_HOST: "127.0.0.1",
        BULWARK_REPLICA_NAME: `replica-${i}`,
        BULWARK_REPLICAS: String(count),
        LOG_LEVEL: process.env.BULWARK_TEST_LOG_LEVEL ?? "error",
        ...env,
      },
      [],
    );
    if (!loaded.ok) throw new Error(loaded.message);
    const log = createLogger(`permission-server-${i}`, loaded.settings.logLevel);
    const build = providerBuilder(count);
    servers.push(
      await startServer(loaded.settings, {
        log,
        build: input => build({ ...input, spec: route(i, input.spec) }),
        kube: options.kube,
      }),
    );
  }
  return servers;
}

export async function createProvider(
  cluster: TestCluster,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({
    ...BULWARK,
    plural: "permissionproviders",
    body: {
      apiVersion: "bulwark.dev/v1alpha1",
      kind: "PermissionProvider",
      metadata: { name },
      spec,
    },
  });
}

/** The permission every test group grants: read on "orders" through the stand-in API. */
export function ordersRead(provider: string): Record<string, unknown> {
  return { name: "orders-read", provider, params: { resource: "orders", action: "read" } };
}

/**
 * A stand-in authorization API, an http PermissionProvider named after the namespace that points
 * at it, and a "readers" group granting orders-read through it.
 */
export async function startAuthzProvider(
  cluster: TestCluster,
  namespace: string,
  api: AuthzApiOptions,
  timeoutSeconds: number,
): Promise<{ authz: AuthzApi; provider: string }> {
  const authz = await startAuthzApi(api);
  const provider = `authz-${namespace}`;
  await createProvider(cluster, provider, {
    type: "http",
    address: authz.url,
    timeoutSeconds,
    rateLimit: { qps: 50, burst: 50 },
    concurrency: 8,
  });
  await createGroup(cluster, namespace, "readers", { permissions: [ordersRead(provider)] });
  return { authz, provider };
}

export async function deleteProvider(cluster: TestCluster, name: string): Promise<void> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  await custom
    .deleteClusterCustomObject({ ...BULWARK, plural: "permissionproviders", name })
    .catch(() => {});
}

export async function createGroup(
  cluster: TestCluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({
    ...BULWARK,
    namespace,
    plural: "permissiongroups",
    body: { apiVersion: "bulwark.dev/v1alpha1", kind: "PermissionGroup", metadata: { name }, spec },
  });
}

export async function replaceGroupSpec(
  cluster: TestCluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  const current = (await custom.getNamespacedCustomObject({
    ...BULWARK,
    namespace,
    plural: "permissiongroups",
    name,
  })) as Record<string, unknown>;
  await custom.replaceNamespacedCustomObject({
    ...BULWARK,
    namespace,
    plural: "permissiongroups",
    name,
    body: { ...current, spec },
  });
}

/** A bare pod naming `group` (the Pepr module injects the init container and the finalizer). */
export async function createPod(
  cluster: TestCluster,
  namespace: string,
  name: string,
  group: string,
): Promise<V1Pod> {
  return cluster.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, annotations: { [GROUP_ANNOTATION]: group } },
      spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
    },
  });
}

/** What kubelet would post once the sandbox has its IP. */
export async function setPodIp(
  cluster: TestCluster,
  namespace: string,
  name: string,
  ip: string,
): Promise<V1Pod> {
  return cluster.core.patchNamespacedPodStatus({
    name,
    namespace,
    body: [
      { op: "add", path: "/status/podIP", value: ip },
      { op: "add", path: "/status/podIPs", value: [{ ip }] },
    ],
  });
}

/** The pod's bound service-account token for the permission server, as kubelet projects it. */
export async function podToken(
  cluster: TestCluster,
  pod: V1Pod,
  audience = AUDIENCE,
): Promise<string> {
  const request = await cluster.core.createNamespacedServiceAccountToken({
    name: pod.spec?.serviceAccountName ?? "default",
    namespace: pod.metadata?.namespace ?? "",
    body: {
      spec: {
        audiences: [audience],
        expirationSeconds: 3600,
        boundObjectRef: {
          apiVersion: "v1",
          kind: "Pod",
          name: pod.metadata?.name,
          uid: pod.metadata?.uid,
        },
      },
    },
  });
  const token = request.status?.token;
  if (!token) throw new Error("TokenRequest returned no token");
  return token;
}

/**
 * Runs the real init client for `pod` against `serverUrl` with `token`, as the container would;
 * `ca` is the BULWARK_PERMISSION_CA it is given (an https server's CA).
 */
export async function runInitFor(
  serverUrl: string,
  pod: V1Pod,
  token: string,
  ca?: string,
): Promise<InitResult> {
  const loaded = loadInitSettings({
    POD_NAME: pod.metadata?.name,
    POD_NAMESPACE: pod.metadata?.namespace,
    POD_UID: pod.metadata?.uid,
    POD_IP: pod.status?.podIP,
    BULWARK_PERMISSION_SERVER: serverUrl,
    BULWARK_TOKEN_PATH: "/unused",
    BULWARK_INIT_WAIT_SECONDS: "5",
    BULWARK_INIT_RETRY_MAX_SECONDS: "1",
    ...(ca ? { BULWARK_PERMISSION_CA: ca } : {}),
  });
  if (!loaded.ok) throw new Error(loaded.message);
  return runInit(loaded.settings, {
    say: () => {},
    sleep: ms => new Promise(r => setTimeout(r, ms)),
    random: Math.random,
    fetch: trustingFetch(ca),
    readToken: () => token,
  });
}

export async function podsOf(
  cluster: TestCluster,
  namespace: string,
  selector: string,
): Promise<V1Pod[]> {
  return (await cluster.core.listNamespacedPod({ namespace, labelSelector: selector })).items;
}

export async function gone(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<boolean> {
  try {
    await cluster.core.readNamespacedPod({ name, namespace });
    return false;
  } catch (error) {
    return isNotFound(error);
  }
}

export async function waitGone(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<void> {
  await waitUntil(
    `${namespace}/${name} to be gone`,
    () => gone(cluster, namespace, name),
    60_000,
    250,
  );
}

export function annotation(pod: V1Pod, key: string): string | undefined {
  return pod.metadata?.annotations?.[key];
}
