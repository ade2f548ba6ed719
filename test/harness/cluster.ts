// What an integration test gets: the shared control plane that test/run.ts started, a client,
// and a namespace of its own so tests never see each other's objects.
import {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  type KubeConfig,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { request, type RequestOptions } from "node:https";
import { loadKubeConfig } from "../../hack/control-plane/kube";
import { waitUntil } from "./wait";
import { apiMessage } from "../../kube/api-errors";

export const CLUSTER_ENV = "BULWARK_TEST_CLUSTER";

export interface TestClusterInfo {
  kubeconfigPath: string;
  server: string;
  dir: string;
  binDir: string;
  peprUrl: string;
  webhookNames: string[];
  /** The Pepr module's own Prometheus endpoint (Bulwark's metrics). */
  metricsUrl: string;
  /** The stand-in permission endpoint's test controls (test/harness/permission-endpoint.ts). */
  permissionEndpointUrl: string;
  /** The same endpoint over HTTPS: the permission server URL the module injects and revokes at. */
  permissionServerUrl: string;
  /** The CA of that HTTPS listener, which the module reads from ENDPOINT_CA_SECRET and injects. */
  permissionCa: string;
  /** The supervised Pepr watcher's PID: kill it and it comes back after a few seconds. */
  watcherPidFile: string;
}

export interface TestCluster extends TestClusterInfo {
  kc: KubeConfig;
  core: CoreV1Api;
  objects: KubernetesObjectApi;
}

export function testCluster(): TestCluster {
  const infoPath = process.env[CLUSTER_ENV];
  if (!infoPath) {
    throw new Error(
      `${CLUSTER_ENV} is not set: run integration tests through \`npm test\` (test/run.ts)`,
    );
  }
  const info = JSON.parse(readFileSync(infoPath, "utf8")) as TestClusterInfo;
  const kc = loadKubeConfig(info.kubeconfigPath);
  return {
    ...info,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

/** Creates `<prefix>-<random>`; the returned function deletes it (the namespace controller empties it). */
export async function testNamespace(
  cluster: TestCluster,
  prefix: string,
): Promise<[string, () => Promise<void>]> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await cluster.core.createNamespace({
    body: { metadata: { name, labels: { "bulwark.dev/test": "true" } } },
  });
  // Pods need the default ServiceAccount, which the controller manager creates a moment later.
  await waitUntil(`the default ServiceAccount in ${name}`, () =>
    cluster.core.readNamespacedServiceAccount({ name: "default", namespace: name }),
  );
  return [name, async () => void (await cluster.core.deleteNamespace({ name }))];
}

/** The API server's message for a create or update that must be refused; fails the test if accepted. */
export async function rejection(write: () => Promise<unknown>): Promise<string> {
  try {
    await write();
  } catch (error) {
    return apiMessage(error);
  }
  throw new Error("the API server accepted the object");
}

/** A PermissionProvider `authz-<namespace>` (cluster-scoped) and a PermissionGroup in the namespace using it. */
export async function createPermissionGroup(
  cluster: Pick<TestCluster, "kc">,
  namespace: string,
  group: string,
): Promise<string> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  const api = { group: "bulwark.dev", version: "v1alpha1" };
  const provider = `authz-${namespace}`;
  await custom.createClusterCustomObject({
    ...api,
    plural: "permissionproviders",
    body: {
      apiVersion: "bulwark.dev/v1alpha1",
      kind: "PermissionProvider",
      metadata: { name: provider },
      spec: { type: "http", address: "https://authz.example.com" },
    },
  });
  await custom.createNamespacedCustomObject({
    ...api,
    namespace,
    plural: "permissiongroups",
    body: permissionGroup(group, provider),
  });
  return provider;
}

/** A PermissionGroup granting orders-read through `provider`. */
export function permissionGroup(name: string, provider: string): object {
  return {
    apiVersion: "bulwark.dev/v1alpha1",
    kind: "PermissionGroup",
    metadata: { name },
    spec: {
      permissions: [
        { name: "orders-read", provider, params: { resource: "orders", action: "read" } },
      ],
    },
  };
}

/** Waits until no namespace is terminating: the checksum covers the whole cluster. */
export async function quietCluster(cluster: TestCluster): Promise<void> {
  await waitUntil(
    "namespaces of earlier tests to finish terminating",
    async () =>
      (await cluster.core.listNamespace()).items.every(n => n.status?.phase !== "Terminating"),
    120_000,
    500,
  );
}

/**
 * Waits until the clock is in a later second than `sinceMs`. creationTimestamp has 1 s steps: an
 * object created after this counts as newer than one whose creation had returned by `sinceMs`.
 */
export async function nextCreationSecond(sinceMs: number): Promise<void> {
  const next = (Math.floor(sinceMs / 1000) + 1) * 1000;
  await waitUntil(
    "the next second, for a later creationTimestamp",
    () => Date.now() >= next,
    5_000,
  );
}

/** The API server's /metrics text, read with `kc`'s (admin) credentials. */
export async function apiServerMetrics(kc: KubeConfig): Promise<string> {
  const options: RequestOptions = { method: "GET", headers: {} };
  await kc.applyToHTTPSOptions(options as never);
  const url = new URL("/metrics", kc.getCurrentCluster()!.server);
  return new Promise((resolve, reject) => {
    const req = request(url, options, res => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", chunk => (text += chunk));
      res.on("end", () =>
        res.statusCode === 200 ? resolve(text) : reject(new Error(`/metrics: ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Requests the API server counted (apiserver_request_total) for `resource` and `verb`, any code. */
export function apiRequestCount(metrics: string, resource: string, verb: string): number {
  let total = 0;
  for (const line of metrics.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    if (!line.includes(`resource="${resource}"`) || !line.includes(`verb="${verb}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
