// Scale-up of N pods (500) against the stand-in authorization API limited to Q requests per
// second (10; it answers 429 above that) whose grants take G seconds (2): total time, the peak
// QPS the API saw (must never exceed the provider's configured limit: no 429 at all), and p50/p99
// time-to-granted. Real objects: a real kube-apiserver and etcd, N real Pods (created with what the
// injection adds: finalizer, label, group annotation; the Pepr module itself is not running),
// IPs posted through the status subresource, a bound token per pod from the TokenRequest API,
// the real permission server, and the real init client per pod (in this process).
//
// Peer, same run: the ideal, the time the API's own limit allows at best (each pod needs a grant
// request and at least one poll, so 2·N requests at Q per second).
//
//   npx tsx hack/bench/permission-scaleup.ts [--pods 500] [--qps 10] [--grant-seconds 2]
import { CoreV1Api, CustomObjectsApi, type V1Pod } from "@kubernetes/client-node";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { loadKubeConfig } from "../control-plane/kube";
import { stopEverything } from "../control-plane/processes";
import { installCrds } from "../install-crds";
import {
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_MANAGED_LABEL,
  POD_PERMISSION_FINALIZER,
} from "../../core/names";
import { runInit } from "../../init/client";
import { loadInitSettings } from "../../init/settings";
import { providerBuilder } from "../../permission-server/providers/build";
import { createLogger } from "../../kube/log";
import { startServer } from "../../permission-server/server";
import { loadSettings } from "../../permission-server/settings";
import { startAuthzApi } from "../../test/harness/authz-api";

const { values } = parseArgs({
  options: {
    pods: { type: "string" },
    qps: { type: "string" },
    "grant-seconds": { type: "string" },
  },
});
const PODS = Number(values.pods ?? 500);
const QPS = Number(values.qps ?? 10);
const GRANT_MS = Number(values["grant-seconds"] ?? 2) * 1000;
const NS = "bench";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Runs `work` over `items`, at most `limit` at once. */
async function pool<T, R>(
  items: T[],
  limit: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T, i);
    }
  });
  await Promise.all(workers);
  return results;
}

async function setUp(core: CoreV1Api, custom: CustomObjectsApi, authzUrl: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: NS } } });
  await core.createNamespacedServiceAccount({
    namespace: NS,
    body: { metadata: { name: "default" } },
  });
  await custom.createClusterCustomObject({
    group: "bulwark.dev",
    version: "v1alpha1",
    plural: "permissionproviders",
    body: {
      apiVersion: "bulwark.dev/v1alpha1",
      kind: "PermissionProvider",
      metadata: { name: "authz" },
      spec: {
        type: "http",
        address: authzUrl,
        timeoutSeconds: 10,
        rateLimit: { qps: QPS, burst: QPS },
        concurrency: 64,
      },
    },
  });
  await custom.createNamespacedCustomObject({
    group: "bulwark.dev",
    version: "v1alpha1",
    namespace: NS,
    plural: "permissiongroups",
    body: {
      apiVersion: "bulwark.dev/v1alpha1",
      kind: "PermissionGroup",
      metadata: { name: "readers" },
      spec: {
        permissions: [
          { name: "orders", provider: "authz", params: { resource: "orders", action: "read" } },
        ],
      },
    },
  });
}

/** A started pod as the injection and kubelet leave it, and its bound token. */
async function startedPod(core: CoreV1Api, i: number): Promise<{ pod: V1Pod; token: string }> {
  const name = `web-${i}`;
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: {
        name,
        labels: { [PERMISSION_MANAGED_LABEL]: "true" },
        annotations: { [PERMISSION_GROUP_ANNOTATION]: "readers" },
        finalizers: [POD_PERMISSION_FINALIZER],
      },
      spec: {
        serviceAccountName: "default",
        containers: [{ name: "app", image: "registry.example/app:1" }],
      },
    },
  });
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const pod = await core.patchNamespacedPodStatus({
    name,
    namespace: NS,
    body: [
      { op: "add", path: "/status/podIP", value: ip },
      { op: "add", path: "/status/podIPs", value: [{ ip }] },
    ],
  });
  const request = await core.createNamespacedServiceAccountToken({
    name: "default",
    namespace: NS,
    body: {
      spec: {
        audiences: ["bulwark-permission-server"],
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name, uid: pod.metadata?.uid },
      },
    },
  });
  return { pod, token: request.status?.token ?? "" };
}

async function initFor(serverUrl: string, pod: V1Pod, token: string): Promise<boolean> {
  const loaded = loadInitSettings({
    POD_NAME: pod.metadata?.name,
    POD_NAMESPACE: NS,
    POD_UID: pod.metadata?.uid,
    POD_IP: pod.status?.podIP,
    BULWARK_PERMISSION_SERVER: serverUrl,
  });
  if (!loaded.ok) throw new Error(loaded.message);
  const result = await runInit(loaded.settings, {
    say: () => {},
    sleep: ms => new Promise(r => setTimeout(r, ms)),
    random: Math.random,
    fetch: (...args) => fetch(...args),
    readToken: () => token,
  });
  return result.granted;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-permission-"));
  try {
    const controlPlane = await startControlPlane({
      dir,
      binDir: ensureBinaries(() => {}),
      log: () => {},
    });
    await installCrds(controlPlane.kubeconfigPath);
    const kc = loadKubeConfig(controlPlane.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const authz = await startAuthzApi({ grantLatencyMs: GRANT_MS, rateLimitQps: QPS });
    await setUp(core, kc.makeApiClient(CustomObjectsApi), authz.url);
    const loaded = loadSettings(
      {
        KUBECONFIG: controlPlane.kubeconfigPath,
        BULWARK_NAMESPACE: NS,
        BULWARK_PERMISSION_PORT: "0",
        BULWARK_PERMISSION_HOST: "127.0.0.1",
        BULWARK_REPLICA_NAME: "bench",
        LOG_LEVEL: "warn",
      },
      [],
    );
    if (!loaded.ok) throw new Error(loaded.message);
    const server = await startServer(loaded.settings, {
      log: createLogger("permission-server", "warn"),
      build: providerBuilder(1),
    });
    console.log(`creating ${PODS} pods with IPs and bound tokens...`);
    const setupStart = Date.now();
    const pods = await pool(
      Array.from({ length: PODS }, (_, i) => i),
      16,
      i => startedPod(core, i + 1),
    );
    console.log(`  ${((Date.now() - setupStart) / 1000).toFixed(1)} s`);

    console.log(
      `scale-up: ${PODS} init clients at once; API limit ${QPS} QPS, grants take ${GRANT_MS / 1000} s`,
    );
    const start = Date.now();
    const times = await Promise.all(
      pods.map(async ({ pod, token }) => {
        const granted = await initFor(server.url, pod, token);
        if (!granted) throw new Error(`${pod.metadata?.name} was not granted`);
        return Date.now() - start;
      }),
    );
    const totalMs = Date.now() - start;
    const sorted = [...times].sort((a, b) => a - b);
    const stats = authz.stats();
    const idealMs = ((2 * PODS) / QPS) * 1000;
    const row = (label: string, value: string): void =>
      console.log(`  ${label.padEnd(34)} ${value}`);
    console.log("\nresults");
    row("pods granted", `${times.length} / ${PODS}`);
    row("total time", `${(totalMs / 1000).toFixed(1)} s`);
    row("ideal (2 requests/pod at the limit)", `${(idealMs / 1000).toFixed(1)} s`);
    row("ratio total / ideal", (totalMs / idealMs).toFixed(2));
    row("time-to-granted p50", `${(percentile(sorted, 50) / 1000).toFixed(1)} s`);
    row("time-to-granted p99", `${(percentile(sorted, 99) / 1000).toFixed(1)} s`);
    row("time-to-granted max", `${((sorted.at(-1) ?? NaN) / 1000).toFixed(1)} s`);
    row("requests seen by the API", String(stats.requests));
    row("requests per pod", (stats.requests / PODS).toFixed(2));
    row("peak QPS seen by the API", `${stats.peakQps} (limit ${QPS})`);
    row("429 answers (over the limit)", String(stats.byStatus[429] ?? 0));
    row("answers by status", JSON.stringify(stats.byStatus));
    const verdict = stats.peakQps <= QPS && !(stats.byStatus[429] ?? 0) ? "OK" : "EXCEEDED";
    row("limit respected", verdict);
    await server.stop();
    await authz.close();
    await controlPlane.stop();
    if (verdict !== "OK") process.exitCode = 1;
  } finally {
    await stopEverything();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
