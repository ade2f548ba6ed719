// `bulwark uninstall [--dry-run] [--keep-crds]`: removes Bulwark from a cluster in an order that
// leaves nothing stuck.
//   1. strip Bulwark's finalizer from every pod that has it: once the module is gone nobody would
//      remove it, and those pods would stay Terminating forever;
//   2. delete the webhook configurations (with failurePolicy Fail and no module behind them, every
//      pod, Ingress and Secret write in the cluster would be refused) and the admission policies
//      that go with them;
//   3. strip the finalizer again, from pods admitted between 1 and 2;
//   4. delete the rest: the Pepr module's controllers and RBAC, the workloads, their RBAC, the
//      IngressClass, Bulwark's namespace;
//   5. delete the CRDs, last (and so every checksum object, PermissionGroup and PermissionProvider),
//      unless --keep-crds.
// Each phase finds its objects right before it runs, and prints what it does (or would do).
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Pod,
} from "@kubernetes/client-node";
import { POD_PERMISSION_FINALIZER } from "../core/names";
import { isInvalid, isNotFound } from "../kube/api-errors";
import { finalizerRemovalPatch } from "../core/json-patch";
import { NO_PROGRESS, type Progress } from "./progress";

export interface Installation {
  /** The Pepr module's name prefix: `pepr-<uuid>` (webhooks, controllers, their RBAC and Secrets). */
  peprName: string;
  peprNamespace: string;
  /** Bulwark's own namespace (the workloads); deleted only if it carries `labelSelector`. */
  namespace: string;
  /** What every object of the install carries (manifests and the Helm chart set it). */
  labelSelector: string;
  crds: string[];
  finalizer: string;
  /** Where to look for pods with the finalizer; every namespace when absent. */
  podNamespaces?: string[];
}

export const BULWARK_CRDS = [
  "ingresschecksums.tengine.taobao.org",
  "secretchecksums.tengine.taobao.org",
  "permissiongroups.bulwark.dev",
  "permissionproviders.bulwark.dev",
  "permissiongrants.bulwark.dev",
];

export const DEFAULT_INSTALLATION: Installation = {
  peprName: "pepr-bulwark",
  peprNamespace: "pepr-system",
  namespace: "bulwark-system",
  labelSelector: "app.kubernetes.io/part-of=bulwark",
  crds: BULWARK_CRDS,
  finalizer: POD_PERMISSION_FINALIZER,
};

export interface UninstallOptions {
  dryRun: boolean;
  keepCrds: boolean;
  /** A count of each phase's objects done, on a terminal. */
  progress?: Progress;
}

export type PhaseName = "finalizers" | "webhooks" | "finalizers-again" | "resources" | "crds";

export const PHASES: readonly { name: PhaseName; title: string }[] = [
  { name: "finalizers", title: "strip the pod-permission finalizer from pods" },
  { name: "webhooks", title: "delete the webhook configurations and admission policies" },
  { name: "finalizers-again", title: "strip the finalizer from pods admitted meanwhile" },
  { name: "resources", title: "delete the module, the workloads and their RBAC" },
  { name: "crds", title: "delete the CustomResourceDefinitions" },
];

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface Action {
  verb: "strip-finalizer" | "delete";
  ref: ObjectRef;
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}

export function refOf(object: KubernetesObject): ObjectRef {
  return {
    apiVersion: object.apiVersion ?? "v1",
    kind: object.kind ?? "",
    name: object.metadata?.name ?? "",
    ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
  };
}

/** The pods that carry `finalizer`, in a stable order. */
export function podsWithFinalizer(pods: readonly V1Pod[], finalizer: string): ObjectRef[] {
  return pods
    .filter(p => p.metadata?.finalizers?.includes(finalizer))
    .map(p => refOf({ ...p, apiVersion: "v1", kind: "Pod" }))
    .sort((a, b) => describeRef(a).localeCompare(describeRef(b)));
}

/** A Pepr module object of this install: `pepr-<uuid>` itself or `pepr-<uuid>-…`. */
export function isModuleObject(name: string | undefined, peprName: string): boolean {
  return name === peprName || (name?.startsWith(`${peprName}-`) ?? false);
}

type Kind = { apiVersion: string; kind: string };

/** The admission kinds: the module's webhooks and policies, and the workloads' labelled policies. */
const WEBHOOK_KINDS: Kind[] = [
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration" },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration" },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingAdmissionPolicyBinding" },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingAdmissionPolicy" },
];

/** Kinds the Pepr module puts in its namespace, found by name. */
const MODULE_KINDS: Kind[] = [
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "v1", kind: "ServiceAccount" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
  { apiVersion: "pepr.dev/v1", kind: "PeprStore" },
];

/** Kinds an install labels, found by label in every namespace (or cluster-wide). */
const LABELLED_KINDS: Kind[] = [
  { apiVersion: "apps/v1", kind: "StatefulSet" },
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "DaemonSet" },
  { apiVersion: "policy/v1", kind: "PodDisruptionBudget" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "ServiceAccount" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" },
  { apiVersion: "networking.k8s.io/v1", kind: "IngressClass" },
];

const RBAC_CLUSTER_KINDS: Kind[] = [
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" },
];

const JSON_PATCH = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);

/** The cluster as uninstall sees it: finding objects, and changing them. */
export class Cluster {
  private readonly objects: KubernetesObjectApi;
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async list(kind: Kind, options: { namespace?: string; labelSelector?: string } = {}) {
    try {
      const list = await this.objects.list(
        kind.apiVersion,
        kind.kind,
        options.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        options.labelSelector,
      );
      return list.items.map(item => ({ ...item, apiVersion: kind.apiVersion, kind: kind.kind }));
    } catch (error) {
      // A kind the cluster does not serve (no PeprStore CRD) or a namespace that is gone.
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  async pods(namespaces: string[] | undefined): Promise<V1Pod[]> {
    if (!namespaces) return (await this.core.listPodForAllNamespaces()).items;
    const lists = await Promise.all(
      namespaces.map(namespace => this.core.listNamespacedPod({ namespace })),
    );
    return lists.flatMap(l => l.items);
  }

  /** Reads the pod fresh and removes the finalizer; false when it is already gone. */
  async stripFinalizer(ref: ObjectRef, finalizer: string): Promise<boolean> {
    const namespace = ref.namespace ?? "";
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const pod = await this.core.readNamespacedPod({ name: ref.name, namespace });
        const patch = finalizerRemovalPatch(pod.metadata?.finalizers, finalizer);
        if (!patch) return false;
        await this.core.patchNamespacedPod({ name: ref.name, namespace, body: patch }, JSON_PATCH);
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        // 422: the test op failed, the list changed under us; read again.
        if (!isInvalid(error)) throw error;
      }
    }
    throw new Error(`${describeRef(ref)}: its finalizers kept changing; run uninstall again`);
  }

  async delete(ref: ObjectRef): Promise<boolean> {
    try {
      await this.objects.delete(
        {
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, namespace: ref.namespace },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        "Background",
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}

function unique(refs: ObjectRef[]): ObjectRef[] {
  const seen = new Set<string>();
  return refs.filter(r => {
    const key = `${r.apiVersion} ${describeRef(r)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function findWebhooks(cluster: Cluster, install: Installation): Promise<ObjectRef[]> {
  const found: ObjectRef[] = [];
  for (const kind of WEBHOOK_KINDS) {
    const all = await cluster.list(kind);
    const labelled = await cluster.list(kind, { labelSelector: install.labelSelector });
    found.push(...all.filter(o => isModuleObject(o.metadata?.name, install.peprName)).map(refOf));
    found.push(...labelled.map(refOf));
  }
  return unique(found);
}

async function findResources(cluster: Cluster, install: Installation): Promise<ObjectRef[]> {
  const found: ObjectRef[] = [];
  for (const kind of MODULE_KINDS) {
    const items = await cluster.list(kind, { namespace: install.peprNamespace });
    found.push(...items.filter(o => isModuleObject(o.metadata?.name, install.peprName)).map(refOf));
  }
  for (const kind of RBAC_CLUSTER_KINDS) {
    const items = await cluster.list(kind);
    found.push(...items.filter(o => isModuleObject(o.metadata?.name, install.peprName)).map(refOf));
  }
  for (const kind of LABELLED_KINDS) {
    found.push(...(await cluster.list(kind, { labelSelector: install.labelSelector })).map(refOf));
  }
  const namespaces = await cluster.list(
    { apiVersion: "v1", kind: "Namespace" },
    { labelSelector: install.labelSelector },
  );
  found.push(...namespaces.filter(n => n.metadata?.name === install.namespace).map(refOf));
  return unique(found);
}

async function findCrds(cluster: Cluster, install: Installation): Promise<ObjectRef[]> {
  const kind = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition" };
  const all = await cluster.list(kind);
  const wanted = new Set(install.crds);
  return all
    .filter(o => wanted.has(o.metadata?.name ?? ""))
    .map(refOf)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** What one phase acts on, found now. */
export async function findPhase(
  cluster: Cluster,
  install: Installation,
  phase: PhaseName,
): Promise<Action[]> {
  if (phase === "finalizers" || phase === "finalizers-again") {
    const pods = await cluster.pods(install.podNamespaces);
    return podsWithFinalizer(pods, install.finalizer).map(ref => ({
      verb: "strip-finalizer",
      ref,
    }));
  }
  const find = { webhooks: findWebhooks, resources: findResources, crds: findCrds }[phase];
  return (await find(cluster, install)).map(ref => ({ verb: "delete", ref }));
}

async function perform(cluster: Cluster, install: Installation, action: Action): Promise<string> {
  if (action.verb === "strip-finalizer") {
    const done = await cluster.stripFinalizer(action.ref, install.finalizer);
    return done ? "finalizer removed" : "already without it";
  }
  return (await cluster.delete(action.ref)) ? "deleted" : "already gone";
}

function phasesFor(options: UninstallOptions) {
  return PHASES.filter(p => !(options.keepCrds && p.name === "crds"));
}

export interface UninstallSummary {
  /** Per phase, in order, the objects it acted on (or would). */
  phases: { name: PhaseName; actions: Action[] }[];
}

/** Runs (or, with dryRun, prints) every phase in order; `say` gets one line at a time. */
export async function uninstall(
  kc: KubeConfig,
  install: Installation,
  options: UninstallOptions,
  say: (line: string) => void,
): Promise<UninstallSummary> {
  const cluster = new Cluster(kc);
  const phases = phasesFor(options);
  const summary: UninstallSummary = { phases: [] };
  const progress = options.progress ?? NO_PROGRESS;
  if (options.dryRun) say("dry run: nothing is changed");
  else say("note: permissions granted to running pods are not revoked at their providers");
  for (const [index, phase] of phases.entries()) {
    const actions = await findPhase(cluster, install, phase.name);
    summary.phases.push({ name: phase.name, actions });
    say(`[${index + 1}/${phases.length}] ${phase.title}: ${actions.length} object(s)`);
    for (const [done, action] of actions.entries()) {
      progress.update(
        `[${index + 1}/${phases.length}] ${phase.title}: ${done + 1}/${actions.length}…`,
      );
      const verb = action.verb === "delete" ? "delete" : `remove ${install.finalizer} from`;
      const outcome = options.dryRun ? "would " + verb : await perform(cluster, install, action);
      say(
        options.dryRun
          ? `  ${outcome} ${describeRef(action.ref)}`
          : `  ${describeRef(action.ref)}: ${outcome}`,
      );
    }
  }
  progress.clear();
  if (options.keepCrds) say(`kept: ${install.crds.join(", ")} (--keep-crds)`);
  say(options.dryRun ? "dry run done" : "Bulwark is uninstalled");
  return summary;
}

/** `bulwark uninstall`, on the kubeconfig's current context (KUBECONFIG or ~/.kube/config). */
export async function uninstallCommand(
  flags: { "dry-run"?: boolean; "keep-crds"?: boolean },
  out: (s: string) => void,
  progress: Progress = NO_PROGRESS,
  kc: KubeConfig = defaultKubeConfig(),
): Promise<number> {
  const options = {
    dryRun: flags["dry-run"] ?? false,
    keepCrds: flags["keep-crds"] ?? false,
    progress,
  };
  await uninstall(kc, DEFAULT_INSTALLATION, options, line => out(`${line}\n`));
  return 0;
}

function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}
