// `bulwark install secrets`: every Secret an install needs and never writes, by one command, named
// as the release names them (core/names.ts): the permission server's serving Secret and the CA
// that signs it (cli/permission-tls.ts), and the edge-health daemons' HMAC key. Safe to run again:
// what is there is kept (cli/install-plan.ts says when a certificate is renewed).
import { randomBytes } from "node:crypto";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { apiMessage, isNotFound } from "../kube/api-errors";
import { installSecretNames, permissionServerServiceName } from "../core/names";
import { CommandFailed } from "./errors";
import { hmacSecretPlan, RENEW_WITHIN_DAYS, servingSecretPlan } from "./install-plan";
import { installSecret, putSecret, readSecret, writePermissionTls } from "./permission-tls";

/** The key the edge-health daemons read (edgeHealth.hmacSecret.key's default). */
export const HMAC_KEY = "hmackey";

export interface InstallSecretsOptions {
  namespace: string;
  release: string;
  /** `<prefix>-...`: the release's names (releasePrefix). */
  prefix: string;
  renew: boolean;
  days: number;
  extraNames: string[];
  now?: Date;
  kubeconfig?: KubeConfig;
}

function kubeConfigOf(options: InstallSecretsOptions): KubeConfig {
  if (options.kubeconfig) return options.kubeconfig;
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

async function requireNamespace(core: CoreV1Api, namespace: string): Promise<void> {
  try {
    await core.readNamespace({ name: namespace });
  } catch (error) {
    if (!isNotFound(error)) {
      throw new CommandFailed(`reading namespace ${namespace}: ${apiMessage(error)}`);
    }
    throw new CommandFailed(
      `namespace ${namespace} not found: install Bulwark first (docs/install.md), or pass -n`,
    );
  }
}

/** The serving Secret: made or renewed by `permission tls`'s code, else kept. */
async function permissionTls(
  core: CoreV1Api,
  options: InstallSecretsOptions,
  kubeconfig: KubeConfig,
): Promise<string> {
  const { namespace, prefix } = options;
  const secret = installSecretNames(prefix).permissionTls;
  const service = permissionServerServiceName(prefix);
  const plan = servingSecretPlan(await readSecret(core, namespace, secret), {
    requiredDns: [`${service}.${namespace}.svc`],
    now: options.now ?? new Date(),
    renew: options.renew,
  });
  if (plan.action === "keep") {
    return `kept Secret ${namespace}/${secret}: ${plan.why} (renewed within ${RENEW_WITHIN_DAYS} days of that, or with --renew)`;
  }
  const line = await writePermissionTls({ ...options, service, secret, kubeconfig });
  return plan.action === "renew" ? `${line}; renewed because ${plan.why}` : line;
}

async function edgeHmac(core: CoreV1Api, options: InstallSecretsOptions): Promise<string> {
  const { namespace, release } = options;
  const name = installSecretNames(options.prefix).edgeHmac;
  const current = await readSecret(core, namespace, name);
  const plan = hmacSecretPlan(current, HMAC_KEY);
  if (plan.action === "keep") return `kept Secret ${namespace}/${name}: ${plan.why}`;
  // 32 random bytes as hex, as `openssl rand -hex 32` makes it; the daemons need at least 16.
  const data = { [HMAC_KEY]: randomBytes(32).toString("hex") };
  const body = installSecret(
    { namespace, name, release },
    current?.type ?? "Opaque",
    data,
    current?.data,
  );
  await putSecret(core, body, current);
  return plan.action === "create"
    ? `created Secret ${namespace}/${name} (${HMAC_KEY}: a new random key)`
    : `added ${HMAC_KEY} to Secret ${namespace}/${name} (its other keys kept)`;
}

/** Makes what is missing; says one line per Secret, as it goes. */
export async function installSecrets(
  options: InstallSecretsOptions,
  say: (line: string) => void,
): Promise<void> {
  const kubeconfig = kubeConfigOf(options);
  const core = kubeconfig.makeApiClient(CoreV1Api);
  await requireNamespace(core, options.namespace);
  say(await permissionTls(core, options, kubeconfig));
  say(await edgeHmac(core, options));
}
