// Runs the built Pepr module as a local process against the control plane, the way `pepr dev`
// does for a cluster: admission and watch in one process (PEPR_MODE=dev), its webhook
// configurations pointing at https://127.0.0.1:<port> with our CA as caBundle.
import {
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { peprStoreCRD } from "pepr/src/lib/assets/store";
import type { ControlPlane } from "./control-plane";
import { waitForHttpsOk } from "./control-plane";
import {
  applyOrThrow,
  loadKubeConfig,
  readYamlObjects,
  waitForCrdsEstablished,
  waitUntil,
} from "./kube";
import { issueLoopbackServingCertificate } from "./pki";
import { freePort } from "./ports";
import { startProcess, type ManagedProcess } from "./processes";

export const PEPR_UUID = "bulwark";
export const PEPR_NAMESPACE = "pepr-system";

export interface PeprModuleOptions {
  /** The module's root (where package.json and node_modules are). */
  root: string;
  /** `pepr build`'s output folder, relative to root. */
  distDir?: string;
  /** info (default) or debug: the wiring probe reads the "Incoming request" lines Pepr logs at info. */
  logLevel?: "info" | "debug";
  /** Extra environment for the module process (e.g. BULWARK_METRICS_PORT). */
  env?: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

export interface RunningPeprModule {
  readonly url: string;
  readonly process: ManagedProcess;
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
      return config;
    });
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

  const cert = issueLoopbackServingCertificate(cp.pki, "pepr-module");
  const port = await freePort();
  const apiPath = randomBytes(32).toString("hex");
  const url = `https://127.0.0.1:${port}`;
  log(`starting the Pepr module on ${url}`);
  const child = startProcess("pepr-module", process.execPath, [bundle], {
    cwd: options.root,
    logFile: join(cp.dir, "logs", "pepr-module.log"),
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfigPath,
      PEPR_MODE: "dev",
      PEPR_API_PATH: apiPath,
      SSL_KEY_PATH: cert.keyPath,
      SSL_CERT_PATH: cert.certPath,
      BULWARK_PEPR_PORT: String(port),
      LOG_LEVEL: options.logLevel ?? "info",
      PEPR_PRETTY_LOGS: "false",
      ...options.env,
    },
  });
  const webhooks = localWebhookConfigurations(
    readYamlObjects(manifest),
    url,
    apiPath,
    cp.pki.caPem,
  );
  const stop = async (): Promise<void> => {
    await removeWebhooks(kc, webhooks).catch(() => {});
    await child.stop();
  };
  try {
    await waitForHttpsOk(`${url}/healthz`, cp.pki.caPem, child, 60_000);
    await applyOrThrow(kc, webhooks);
    if (mutatesPodCreates(webhooks)) await waitForWebhookTraffic(kc, child.logFile);
    else log("no Pod CREATE rule to probe the webhook wiring with; not waiting for it");
  } catch (error) {
    await stop();
    throw error;
  }
  log("the Pepr module serves the API server's admission calls");
  return { url, process: child, webhookNames: webhooks.map(w => w.metadata?.name ?? ""), stop };
}

async function removeWebhooks(kc: KubeConfig, webhooks: KubernetesObject[]): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const webhook of webhooks) await client.delete(webhook);
}

/** Admission requests the module has logged so far (Pepr logs each one as "Incoming request"). */
function admissionRequestsLogged(logFile: string): number {
  return readFileSync(logFile, "utf8").split('"msg":"Incoming request"').length - 1;
}

/**
 * The API server learns about new webhook configurations through an informer, a moment after
 * they are stored. A dry-run Pod create is sent to our mutating webhook; once the module has
 * logged it, the wiring is live.
 */
async function waitForWebhookTraffic(kc: KubeConfig, logFile: string): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const before = admissionRequestsLogged(logFile);
  await waitUntil("the API server to call the Pepr module's webhook", async () => {
    await client.create(
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { generateName: "bulwark-webhook-probe-", namespace: "default" },
        spec: { containers: [{ name: "probe", image: "probe" }] },
      } as KubernetesObject,
      undefined,
      "All",
    );
    return admissionRequestsLogged(logFile) > before;
  });
}
