// `bulwark permission reset POD -n NAMESPACE`: closes a pod's breaker and forgets its backoff,
// as the permission server's reset endpoint does, by editing the breaker ConfigMap directly
// (optimistic concurrency, like every replica): the user's shell needs no route to the server.
// The pod's status goes back to "pending", so the init client's next call (kubelet restarts it)
// or a waiting one's next poll starts an attempt at once.
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { PERMISSION_STATUS_ANNOTATION } from "../core/names";
import { BreakerStore } from "../permission-server/breaker-store";
import { apiMessage, isNotFound } from "../permission-server/kube";
import { afterReset } from "../permission-server/pod-retry";

export interface ResetOptions {
  pod: string;
  namespace: string;
  /** Where the permission server keeps its breaker ConfigMap. */
  serverNamespace: string;
  configMap: string;
  kubeconfig?: KubeConfig;
}

export class PermissionCommandError extends Error {}

function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/** Resets the pod's breaker; returns the line to print. */
export async function resetPermission(options: ResetOptions): Promise<string> {
  const core = (options.kubeconfig ?? defaultKubeConfig()).makeApiClient(CoreV1Api);
  const { pod: name, namespace } = options;
  let uid: string | undefined;
  try {
    uid = (await core.readNamespacedPod({ name, namespace })).metadata?.uid;
  } catch (error) {
    if (isNotFound(error)) throw new PermissionCommandError(`pod ${namespace}/${name} not found`);
    throw new PermissionCommandError(`reading pod ${namespace}/${name}: ${apiMessage(error)}`);
  }
  if (!uid) throw new PermissionCommandError(`pod ${namespace}/${name} has no UID`);
  const store = new BreakerStore(core, options.serverNamespace, options.configMap);
  const before = await store.read(uid);
  await store.update(uid, () => afterReset());
  await core.patchNamespacedPod(
    {
      name,
      namespace,
      body: { metadata: { annotations: { [PERMISSION_STATUS_ANNOTATION]: "pending" } } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  const was = before.breaker.openedAt ? `open since ${before.breaker.openedAt}` : `closed`;
  return `reset pod ${namespace}/${name} (${uid}): breaker was ${was} with ${before.breaker.failures} failures; now closed, backoff cleared`;
}

export interface PermissionValues {
  namespace?: string;
  "server-namespace"?: string;
  configmap?: string;
  secret?: string;
  days?: string;
  san?: string[];
}

async function tlsCommand(
  extra: readonly string[],
  values: PermissionValues,
  out: (s: string) => void,
): Promise<number> {
  if (extra.length > 0) {
    throw new PermissionCommandError(
      "usage: bulwark permission tls [--server-namespace NS] [--secret NAME] [--days N] [--san DNS:NAME]...",
    );
  }
  const days = Number(values.days ?? 365);
  if (!Number.isInteger(days) || days < 1) {
    throw new PermissionCommandError(
      `--days must be a whole number of days >= 1, got "${values.days}"`,
    );
  }
  // Loaded here: only this command needs openssl and child processes.
  const { writePermissionTls } = await import("./permission-tls");
  const line = await writePermissionTls({
    namespace: values["server-namespace"] ?? "bulwark-system",
    secret: values.secret ?? "bulwark-permission-server-tls",
    days,
    extraNames: values.san ?? [],
  });
  out(`${line}\n`);
  return 0;
}

/** `bulwark permission <command> ...`; usage problems throw PermissionCommandError. */
export async function permissionCommand(
  positionals: readonly string[],
  values: PermissionValues,
  out: (s: string) => void,
): Promise<number> {
  const [, command, pod, ...extra] = positionals;
  if (command === "tls") return tlsCommand(positionals.slice(2), values, out);
  if (command !== "reset") {
    throw new PermissionCommandError(
      `unknown command "permission ${command ?? ""}"; see bulwark --help`,
    );
  }
  if (!pod || extra.length > 0)
    throw new PermissionCommandError("usage: bulwark permission reset POD -n NAMESPACE");
  if (!values.namespace)
    throw new PermissionCommandError("-n NAMESPACE is required: the pod's namespace");
  const line = await resetPermission({
    pod,
    namespace: values.namespace,
    serverNamespace: values["server-namespace"] ?? "bulwark-system",
    configMap: values.configmap ?? "bulwark-permission-breakers",
  });
  out(`${line}\n`);
  return 0;
}
