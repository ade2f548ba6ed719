// `bulwark permission reset POD -n NAMESPACE`: closes a pod's breaker and forgets its backoff,
// as the permission server's reset endpoint does, by editing the breaker ConfigMap directly
// (optimistic concurrency, like every replica): the user's shell needs no route to the server.
// The pod's status goes back to "pending", so the init client's next call (kubelet restarts it)
// or a waiting one's next poll starts an attempt at once.
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from "@kubernetes/client-node";
import {
  installSecretNames,
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
  permissionServerServiceName,
} from "../core/names";
import { DEFAULT_INSTALL_NAMESPACE, daysOf, releaseOf } from "./install";
// A static import: bin/bulwark.js runs the sources through tsx's CommonJS hook, which a dynamic
// import() bypasses (it failed with "Cannot find module .../cli/permission-tls").
import { writePermissionTls } from "./permission-tls";
import { parseGrantStatus } from "../core/permission/grant-status";
import type { PodEntry } from "../core/permission/pod-retry";
import { BreakerStore } from "../kube/breaker-store";
import {
  PERMISSION_API_GROUP,
  PERMISSION_API_VERSION,
  permissionKinds,
} from "../capabilities/pod-permission/permission-crds";
import { apiMessage, isNotFound } from "../kube/api-errors";
import { CommandFailed, UsageError } from "./errors";
import { counted, NO_PROGRESS, type Progress } from "./progress";
import { afterReset } from "../core/permission/pod-retry";

export interface ResetOptions {
  pod: string;
  namespace: string;
  /** Where the permission server keeps its breaker ConfigMap. */
  serverNamespace: string;
  configMap: string;
  kubeconfig?: KubeConfig;
}

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
    if (isNotFound(error)) throw new CommandFailed(`pod ${namespace}/${name} not found`);
    throw new CommandFailed(`reading pod ${namespace}/${name}: ${apiMessage(error)}`);
  }
  if (!uid) throw new CommandFailed(`pod ${namespace}/${name} has no UID`);
  const store = new BreakerStore(core, options.serverNamespace, options.configMap);
  const before = await store.read(uid);
  await store.update(uid, () => afterReset());
  await markPending(core, namespace, name);
  return `reset pod ${namespace}/${name} (${uid}): breaker was ${describeEntry(before)}; now closed, backoff cleared`;
}

/** The pod's status back to "pending": a waiting init client's next poll starts an attempt. */
async function markPending(core: CoreV1Api, namespace: string, name: string): Promise<void> {
  await core.patchNamespacedPod(
    {
      name,
      namespace,
      body: { metadata: { annotations: { [PERMISSION_STATUS_ANNOTATION]: "pending" } } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

function describeEntry(entry: PodEntry): string {
  const was = entry.breaker.openedAt ? `open since ${entry.breaker.openedAt}` : "closed";
  return `${was} with ${entry.breaker.failures} failures`;
}

/** Which pods a bulk reset takes, in one namespace: all of them, or by group or provider. */
export type ResetSelector = { all: true } | { group: string } | { provider: string };

export interface BulkResetOptions extends Omit<ResetOptions, "pod"> {
  selector: ResetSelector;
  /** A count of the pods marked pending, on a terminal. */
  progress?: Progress;
}

/** The groups of `namespace` that name `provider` in a permission. */
async function groupsUsing(
  kc: KubeConfig,
  namespace: string,
  provider: string,
): Promise<Set<string>> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = (await custom.listNamespacedCustomObject({
    group: PERMISSION_API_GROUP,
    version: PERMISSION_API_VERSION,
    namespace,
    plural: permissionKinds.group.plural,
  })) as {
    items: { metadata?: { name?: string }; spec?: { permissions?: { provider?: string }[] } }[];
  };
  return new Set(
    list.items
      .filter(g => g.spec?.permissions?.some(p => p.provider === provider))
      .map(g => g.metadata?.name ?? ""),
  );
}

/**
 * Resets every selected pod that has something to reset (a breaker entry, or a blocked or
 * backing-off status): their entries go in one ConfigMap write, then each pod is marked pending,
 * with a line per pod as it goes. Returns the summary line.
 */
export async function resetPermissions(
  options: BulkResetOptions,
  say: (line: string) => void,
): Promise<string> {
  const kc = options.kubeconfig ?? defaultKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace, selector } = options;
  const groups =
    "provider" in selector ? await groupsUsing(kc, namespace, selector.provider) : undefined;
  const pods = (await core.listNamespacedPod({ namespace })).items.filter(pod => {
    const group = pod.metadata?.annotations?.[PERMISSION_GROUP_ANNOTATION];
    if (group === undefined || pod.metadata?.deletionTimestamp) return false;
    if ("group" in selector) return group === selector.group;
    return groups === undefined || groups.has(group);
  });
  const store = new BreakerStore(core, options.serverNamespace, options.configMap);
  const entries = await store.list();
  const targets = pods.filter(pod => needsReset(pod, entries));
  const what = describeSelector(selector);
  say(
    `${targets.length} of ${pods.length} pods ${what} in ${namespace} have a breaker entry or are blocked or backing off`,
  );
  const before = await store.resetMany(targets.map(pod => pod.metadata?.uid ?? ""));
  let open = 0;
  const progress = options.progress ?? NO_PROGRESS;
  for (const [index, pod] of targets.entries()) {
    const { name = "", uid = "" } = pod.metadata ?? {};
    progress.update(counted("resetting", index + 1, targets.length, "pods"));
    await markPending(core, namespace, name);
    const entry = before.get(uid);
    if (entry?.breaker.openedAt) open++;
    say(
      `[${index + 1}/${targets.length}] reset ${namespace}/${name}: breaker was ${entry ? describeEntry(entry) : "closed"}`,
    );
  }
  progress.clear();
  return `reset ${targets.length} pods ${what} in ${namespace} (${open} with an open breaker): breakers closed, backoffs cleared; their next attempts run at once`;
}

function needsReset(pod: V1Pod, entries: ReadonlyMap<string, PodEntry>): boolean {
  if (entries.has(pod.metadata?.uid ?? "")) return true;
  const status = parseGrantStatus(pod.metadata?.annotations?.[PERMISSION_STATUS_ANNOTATION]);
  return status?.phase === "blocked" || status?.phase === "backoff";
}

function describeSelector(selector: ResetSelector): string {
  if ("group" in selector) return `of group ${selector.group}`;
  if ("provider" in selector) return `using provider ${selector.provider}`;
  return "with a permission group";
}

export interface PermissionValues {
  namespace?: string;
  all?: boolean;
  group?: string;
  provider?: string;
  "server-namespace"?: string;
  configmap?: string;
  secret?: string;
  days?: string;
  san?: string[];
  release?: string;
  prefix?: string;
}

async function tlsCommand(
  extra: readonly string[],
  values: PermissionValues,
  out: (s: string) => void,
): Promise<number> {
  if (extra.length > 0) {
    throw new UsageError(
      "usage: bulwark permission tls [--server-namespace NS] [--release NAME] [--prefix PREFIX] [--secret NAME] [--days N] [--san DNS:NAME]...",
    );
  }
  const { release, prefix } = releaseOf(values);
  const line = await writePermissionTls({
    namespace: values["server-namespace"] ?? DEFAULT_INSTALL_NAMESPACE,
    release,
    service: permissionServerServiceName(prefix),
    secret: values.secret ?? installSecretNames(prefix).permissionTls,
    days: daysOf(values.days),
    extraNames: values.san ?? [],
  });
  out(`${line}\n`);
  return 0;
}

/** `bulwark permission <command> ...`; usage problems throw UsageError. */
export async function permissionCommand(
  positionals: readonly string[],
  values: PermissionValues,
  out: (s: string) => void,
  progress: Progress = NO_PROGRESS,
): Promise<number> {
  const [, command, pod, ...extra] = positionals;
  if (command === "tls") return tlsCommand(positionals.slice(2), values, out);
  if (command !== "reset") {
    throw new UsageError(`unknown command "permission ${command ?? ""}"; see bulwark --help`);
  }
  const selector = resetSelector(pod, extra, values);
  if (!values.namespace) throw new UsageError("-n NAMESPACE is required: the pods' namespace");
  const target = {
    namespace: values.namespace,
    serverNamespace: values["server-namespace"] ?? "bulwark-system",
    configMap: values.configmap ?? "bulwark-permission-breakers",
  };
  const line =
    selector === undefined
      ? await resetPermission({ ...target, pod: pod ?? "" })
      : await resetPermissions({ ...target, selector, progress }, l => out(`${l}\n`));
  out(`${line}\n`);
  return 0;
}

const RESET_USAGE =
  "usage: bulwark permission reset POD -n NAMESPACE | --all -n NAMESPACE | --group GROUP -n NAMESPACE | --provider PROVIDER -n NAMESPACE";

/** Exactly one of: a pod, --all, --group, --provider; undefined for a single pod. */
function resetSelector(
  pod: string | undefined,
  extra: readonly string[],
  values: PermissionValues,
): ResetSelector | undefined {
  const chosen = [
    pod !== undefined,
    values.all === true,
    values.group !== undefined,
    values.provider !== undefined,
  ];
  if (extra.length > 0 || chosen.filter(Boolean).length !== 1) throw new UsageError(RESET_USAGE);
  if (values.all) return { all: true };
  if (values.group !== undefined) return { group: values.group };
  if (values.provider !== undefined) return { provider: values.provider };
  return undefined;
}
