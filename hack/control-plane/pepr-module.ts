// Runs the built Pepr module as local processes against the control plane, as its two
// Deployments run in a cluster: an admission controller and a watcher (PEPR_WATCH_MODE=true),
// the webhook configurations pointing at https://127.0.0.1:<port> with our CA as caBundle. Both
// run as the module's ServiceAccount with the RBAC `pepr build` generated (never as the
// administrator), so what is missing from that RBAC fails here as it would in a cluster, and the
// admission policies that trust Bulwark's accounts see the account they would.
import {
  CoreV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { peprStoreCRD } from "pepr/src/lib/assets/store";
import type { ControlPlane } from "./control-plane";
import { waitForHttpsOk } from "./control-plane";
import { applyOrThrow, loadKubeConfig, readYamlObjects, waitForCrdsEstablished } from "./kube";
import { waitUntil } from "../../test/harness/wait";
import { issueLoopbackServingCertificate } from "./pki";
import { admissionPolicies, applyWebhookPolicy } from "../../packaging/webhook-policy";
import { PERMISSION_GROUP_ANNOTATION } from "../../core/names";
import { apiMessage } from "../../kube/api-errors";
import { freePort } from "./ports";
import { beforeStopEverything, startProcess, type ManagedProcess } from "./processes";

export const PEPR_UUID = "bulwark";
export const PEPR_NAMESPACE = "pepr-system";

export interface PeprModuleOptions {
  /** The module's root (where package.json and node_modules are). */
  root: string;
  /** `pepr build`'s output folder, relative to root. */
  distDir?: string;
  /** Pepr's LOG_LEVEL (default info). */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** How long a dead watcher stays down before it is restarted (a Deployment's restart). */
  watcherRestartDelayMs?: number;
  /** Extra environment for the module process (e.g. BULWARK_METRICS_PORT). */
  env?: NodeJS.ProcessEnv;
  /** Node.js flags for both processes (a benchmark's --cpu-prof; NODE_OPTIONS refuses it). */
  nodeFlags?: string[];
  log?: (message: string) => void;
}

export interface RunningPeprModule {
  readonly url: string;
  /** The admission controller; the watcher is supervised apart (see watcherPidFile). */
  readonly process: ManagedProcess;
  /** Holds the current watcher's PID. */
  readonly watcherPidFile: string;
  readonly webhookNames: string[];
  stop(): Promise<void>;
}

type WebhookConfiguration = KubernetesObject & {
  webhooks?: {
    clientConfig: { url?: string; caBundle?: string; service?: { path?: string } };
    rules?: { operations?: string[]; resources?: string[] }[];
  }[];
};

function mutatesPodCreates(configs: WebhookConfiguration[]): boolean {
  return configs
    .filter(c => c.kind === "MutatingWebhookConfiguration")
    .flatMap(c => c.webhooks ?? [])
    .flatMap(w => w.rules ?? [])
    .some(
      r =>
        r.resources?.includes("pods") &&
        (r.operations?.includes("CREATE") || r.operations?.includes("*")),
    );
}

/** The built webhook configurations, rewritten to call a local URL instead of the in-cluster Service. */
export function localWebhookConfigurations(
  built: KubernetesObject[],
  baseUrl: string,
  apiPath: string,
  caPem: string,
): WebhookConfiguration[] {
  const caBundle = Buffer.from(caPem).toString("base64");
  return built
    .filter(
      o => o.kind === "MutatingWebhookConfiguration" || o.kind === "ValidatingWebhookConfiguration",
    )
    .map(o => {
      const config = structuredClone(o) as WebhookConfiguration;
      for (const webhook of config.webhooks ?? []) {
        const path = webhook.clientConfig.service?.path ?? "";
        const action = path.startsWith("/validate/") ? "validate" : "mutate";
        webhook.clientConfig = { url: `${baseUrl}/${action}/${apiPath}`, caBundle };
      }
      return applyWebhookPolicy(config);
    });
}

/** The module's RBAC and account from its manifest (Pepr binds them to pepr-system/pepr-<uuid>). */
const IDENTITY_KINDS = new Set([
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
]);

/** Applies the module's identity and writes a kubeconfig holding a token of its account. */
async function moduleKubeconfig(
  cp: ControlPlane,
  kc: KubeConfig,
  manifest: KubernetesObject[],
): Promise<string> {
  await applyOrThrow(
    kc,
    manifest.filter(o => IDENTITY_KINDS.has(o.kind ?? "")),
  );
  const account = `pepr-${PEPR_UUID}`;
  const request = await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: account,
    namespace: PEPR_NAMESPACE,
    body: { spec: { audiences: [], expirationSeconds: 48 * 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${PEPR_NAMESPACE}/${account} returned no token`);
  const path = join(cp.dir, "pepr-module.kubeconfig");
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "bulwark",
        cluster: {
          server: cp.server,
          "certificate-authority-data": Buffer.from(cp.pki.caPem).toString("base64"),
        },
      },
    ],
    users: [{ name: account, user: { token } }],
    contexts: [{ name: account, context: { cluster: "bulwark", user: account } }],
    "current-context": account,
  };
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return path;
}

export async function startPeprModule(
  cp: ControlPlane,
  options: PeprModuleOptions,
): Promise<RunningPeprModule> {
  const log = options.log ?? (() => {});
  const dist = join(options.root, options.distDir ?? "dist");
  const bundle = join(dist, `pepr-${PEPR_UUID}.js`);
  const manifest = join(dist, `pepr-module-${PEPR_UUID}.yaml`);
  for (const file of [bundle, manifest]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  }
  const kc = loadKubeConfig(cp.kubeconfigPath);

  // The module loads its store once at start and never retries: the namespace and the
  // PeprStore CRD must exist before it runs.
  await applyOrThrow(kc, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: PEPR_NAMESPACE } },
    peprStoreCRD as KubernetesObject,
  ]);
  await waitForCrdsEstablished(kc, [peprStoreCRD.metadata!.name!]);

  const manifestObjects = readYamlObjects(manifest);
  const kubeconfigPath = await moduleKubeconfig(cp, kc, manifestObjects);
  const cert = issueLoopbackServingCertificate(cp.pki, "pepr-module");
  const [port, watcherPort] = [await freePort(), await freePort()];
  const apiPath = randomBytes(32).toString("hex");
  const url = `https://127.0.0.1:${port}`;
  const baseEnv: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    PEPR_API_PATH: apiPath,
    SSL_KEY_PATH: cert.keyPath,
    SSL_CERT_PATH: cert.certPath,
    LOG_LEVEL: options.logLevel ?? "info",
    PEPR_PRETTY_LOGS: "false",
    ...options.env,
  };
  delete baseEnv.PEPR_MODE;
  // As in a cluster: one admission process, one watcher process (Pepr's two Deployments).
  log(`starting the Pepr module's admission controller on ${url}`);
  const nodeArgs = [...(options.nodeFlags ?? []), bundle];
  const admission = startProcess("pepr-admission", process.execPath, nodeArgs, {
    cwd: options.root,
    logFile: join(cp.dir, "logs", "pepr-admission.log"),
    env: { ...baseEnv, BULWARK_PEPR_PORT: String(port) },
  });
  const watcher = superviseWatcher({
    start: () =>
      startProcess("pepr-watcher", process.execPath, nodeArgs, {
        cwd: options.root,
        logFile: join(cp.dir, "logs", "pepr-watcher.log"),
        env: { ...baseEnv, PEPR_WATCH_MODE: "true", BULWARK_PEPR_PORT: String(watcherPort) },
      }),
    pidFile: join(cp.dir, "pepr-watcher.pid"),
    restartDelayMs: options.watcherRestartDelayMs ?? 5000,
    log,
  });
  const webhooks = localWebhookConfigurations(manifestObjects, url, apiPath, cp.pki.caPem);
  // Applied before the webhooks: a pod the mutation refuses is refused by them.
  const policies = admissionPolicies();
  const stop = async (): Promise<void> => {
    await removeWebhooks(kc, [...webhooks, ...policies]).catch(() => {});
    await watcher.stop();
    await admission.stop();
  };
  try {
    await waitForHttpsOk(`${url}/healthz`, cp.pki.caPem, admission, 60_000);
    await waitForHttpsOk(
      `https://127.0.0.1:${watcherPort}/healthz`,
      cp.pki.caPem,
      watcher.current(),
      60_000,
    );
    await applyOrThrow(kc, [...policies, ...webhooks]);
    if (mutatesPodCreates(webhooks)) await waitForWebhookTraffic(kc);
    else log("no Pod CREATE rule to probe the webhook wiring with; not waiting for it");
  } catch (error) {
    await stop();
    throw error;
  }
  log("the Pepr module serves the API server's admission calls");
  return {
    url,
    process: admission,
    watcherPidFile: join(cp.dir, "pepr-watcher.pid"),
    webhookNames: webhooks.map(w => w.metadata?.name ?? ""),
    stop,
  };
}

interface Supervised {
  current(): ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Keeps the watcher running as its Deployment would: when it dies it comes back after a delay.
 * Its PID is kept in `pidFile`, so a test can kill it and watch it return.
 */
function superviseWatcher(options: {
  start: () => ManagedProcess;
  pidFile: string;
  restartDelayMs: number;
  log: (message: string) => void;
}): Supervised {
  let stopped = false;
  // A caller that stops every process at once (a benchmark's exit) stops this supervisor first:
  // otherwise it would restart the watcher into a folder that is being removed.
  const forget = beforeStopEverything(() => (stopped = true));
  let current = options.start();
  const watch = (child: ManagedProcess): void => {
    writeFileSync(options.pidFile, String(child.pid));
    void child.exited.then(code => {
      if (stopped) return;
      options.log(
        `the Pepr watcher exited (${code}); restarting it in ${options.restartDelayMs}ms`,
      );
      setTimeout(() => {
        if (stopped) return;
        current = options.start();
        watch(current);
      }, options.restartDelayMs);
    });
  };
  watch(current);
  return {
    current: () => current,
    stop: async () => {
      stopped = true;
      forget();
      await current.stop();
    },
  };
}

async function removeWebhooks(kc: KubeConfig, webhooks: KubernetesObject[]): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const webhook of webhooks) await client.delete(webhook);
}

/**
 * The API server learns about new webhook configurations through an informer, a moment after
 * they are stored. A dry-run Pod create is sent to our webhooks; once our refusal comes back, the
 * wiring is live (whatever the module's log level).
 */
async function waitForWebhookTraffic(kc: KubeConfig): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const group = "bulwark-webhook-probe";
  await waitUntil("the API server to call the Pepr module's webhook", async () => {
    // Only pods that name a permission group reach the webhook (packaging/webhook-policy.ts); the
    // group does not exist, so admission refuses the probe, naming it. Before the wiring is live
    // the dry run is admitted.
    try {
      await client.create(
        {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            generateName: "bulwark-webhook-probe-",
            namespace: "default",
            annotations: { [PERMISSION_GROUP_ANNOTATION]: group },
          },
          // Named, so that the token volume the mutation adds passes the API server's checks.
          spec: {
            serviceAccountName: "default",
            containers: [{ name: "probe", image: "probe" }],
          },
        } as KubernetesObject,
        undefined,
        "All",
      );
      return false;
    } catch (error) {
      if (apiMessage(error).includes(`PermissionGroup "${group}"`)) return true;
      // Another refusal (the probe itself invalid): waitUntil names it if the wait times out.
      throw error;
    }
  });
}
