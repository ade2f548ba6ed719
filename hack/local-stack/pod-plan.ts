// What the local pod runner (pod-runner.ts, the stack's stand-in for kubelet) decides, as pure
// functions: which node a pod goes to, whether its init containers can run here, the environment
// and the files of its projected volumes that a `bulwark init` process gets from the pod spec, and the pod status a kubelet
// would write at each step.
import type { V1Container, V1KeyToPath, V1Pod, V1Volume } from "@kubernetes/client-node";
import { INIT_CONTAINER_NAME } from "../../core/permission";

/** Documentation range (RFC 5737): data only, nothing ever sends traffic to these. */
export const POD_IP_PREFIX = "198.51.100.";

/** The lowest free address of 198.51.100.1-254, or undefined when all are taken. */
export function nextPodIp(used: ReadonlySet<string>): string | undefined {
  for (let n = 1; n < 255; n++) {
    const ip = `${POD_IP_PREFIX}${n}`;
    if (!used.has(ip)) return ip;
  }
  return undefined;
}

/**
 * The node an unscheduled pod is bound to: the first local node whose labels carry every pair
 * of the pod's nodeSelector (and its spec.nodeName is unset); undefined when none fits or the pod
 * asks for another scheduler.
 */
export function chooseNode(
  pod: V1Pod,
  nodes: readonly { name: string; labels: Record<string, string> }[],
): string | undefined {
  const scheduler = pod.spec?.schedulerName;
  if (scheduler !== undefined && scheduler !== "default-scheduler") return undefined;
  const selector = pod.spec?.nodeSelector ?? {};
  return nodes.find(n => Object.entries(selector).every(([k, v]) => n.labels[k] === v))?.name;
}

/**
 * One file of a projected volume the container mounts, as a kubelet fills it: a service-account
 * token (requested through the TokenRequest API for this pod), a ConfigMap key (every key when
 * `key` is unset), or a Downward API value resolved here.
 */
export interface ProjectedFile {
  volume: string;
  mountPath: string;
  /** The file's path under the mount (unset for a whole ConfigMap: one file per key). */
  path?: string;
  source:
    | { token: { audience?: string; expirationSeconds: number } }
    | { configMap: { name: string; key?: string; optional: boolean } }
    | { value: string };
}

export interface InitPlan {
  container: string;
  env: Record<string, string>;
  files: ProjectedFile[];
}

export type RunPlan = { ok: true; inits: InitPlan[] } | { ok: false; reason: string };

const FIELDS: Record<string, (pod: V1Pod) => string | undefined> = {
  "metadata.name": pod => pod.metadata?.name,
  "metadata.namespace": pod => pod.metadata?.namespace,
  "metadata.uid": pod => pod.metadata?.uid,
  "spec.nodeName": pod => pod.spec?.nodeName,
  "spec.serviceAccountName": pod => pod.spec?.serviceAccountName,
  "status.podIP": pod => pod.status?.podIP,
  "status.hostIP": pod => pod.status?.hostIP,
};

function resolveEnv(container: V1Container, pod: V1Pod): Record<string, string> | string {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
    if (variable.valueFrom && fieldPath === undefined) {
      return `env ${variable.name} comes from a Secret, ConfigMap or resource, which this runner does not read`;
    }
    const value = fieldPath === undefined ? variable.value : FIELDS[fieldPath]?.(pod);
    if (fieldPath !== undefined && value === undefined) {
      return `env ${variable.name} needs field ${fieldPath}, which this runner does not fill`;
    }
    env[variable.name] = value ?? "";
  }
  return env;
}

type Projection = NonNullable<NonNullable<V1Volume["projected"]>["sources"]>[number];

/** The files one projection source gives, or why this runner cannot fill it. */
function projectedFiles(
  source: Projection,
  at: { volume: string; mountPath: string },
  pod: V1Pod,
): ProjectedFile[] | string {
  const { serviceAccountToken: token, configMap, downwardAPI } = source;
  if (token) {
    const expirationSeconds = token.expirationSeconds ?? 3600;
    return [
      {
        ...at,
        path: token.path,
        source: { token: { audience: token.audience, expirationSeconds } },
      },
    ];
  }
  if (configMap) {
    const optional = configMap.optional ?? false;
    const items: Partial<V1KeyToPath>[] = configMap.items ?? [{}];
    return items.map(i => ({
      ...at,
      path: i.path,
      source: { configMap: { name: configMap.name ?? "", key: i.key, optional } },
    }));
  }
  return downwardAPI
    ? downwardFiles(downwardAPI, at, pod)
    : "a projection of a Secret or a cluster trust bundle";
}

function downwardFiles(
  downwardAPI: NonNullable<Projection["downwardAPI"]>,
  at: { volume: string; mountPath: string },
  pod: V1Pod,
): ProjectedFile[] | string {
  const files: ProjectedFile[] = [];
  for (const item of downwardAPI.items ?? []) {
    const value = item.fieldRef ? FIELDS[item.fieldRef.fieldPath]?.(pod) : undefined;
    if (value === undefined) return `Downward API file ${item.path} is not one this runner fills`;
    files.push({ ...at, path: item.path, source: { value } });
  }
  return files;
}

/** Every file the container's mounts hold; only projected volumes are provided here. */
function volumeFiles(container: V1Container, pod: V1Pod): ProjectedFile[] | string {
  const files: ProjectedFile[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find(v => v.name === mount.name);
    if (!volume?.projected) {
      return `volume ${mount.name} is not a projected volume, the only kind this runner provides`;
    }
    const at = { volume: mount.name, mountPath: mount.mountPath };
    for (const source of volume.projected.sources ?? []) {
      const given = projectedFiles(source, at, pod);
      if (typeof given === "string") return `volume ${mount.name}: ${given}`;
      files.push(...given);
    }
  }
  return files;
}

/** Can the runner run this init container, and with what? Only Bulwark's own `bulwark init`. */
function initPlan(container: V1Container, pod: V1Pod, initImage: string): InitPlan | string {
  const ours =
    container.name === INIT_CONTAINER_NAME &&
    container.image === initImage &&
    container.command === undefined &&
    (container.args === undefined || container.args.join(" ") === "init");
  if (!ours) {
    return `init container ${container.name} (image ${container.image ?? "none"}) is not Bulwark's own bulwark-init (image ${initImage}), the only one this runner can run`;
  }
  const env = resolveEnv(container, pod);
  if (typeof env === "string") return `init container ${container.name}: ${env}`;
  const files = volumeFiles(container, pod);
  if (typeof files === "string") return `init container ${container.name}: ${files}`;
  return { container: container.name, env, files };
}

/** Every init container as a plan, or the first reason one cannot run here. */
export function planPod(pod: V1Pod, initImage: string): RunPlan {
  const inits: InitPlan[] = [];
  for (const container of pod.spec?.initContainers ?? []) {
    const plan = initPlan(container, pod, initImage);
    if (typeof plan === "string") return { ok: false, reason: plan };
    inits.push(plan);
  }
  return { ok: true, inits };
}

/**
 * The env with every path under a token mount moved to where the runner wrote the token: the
 * container's mount path (/var/run/secrets/...) is not ours to write on this machine.
 */
export function relocateMounts(
  env: Record<string, string>,
  mounts: readonly { mountPath: string; localDir: string }[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const mount = mounts.find(m => value === m.mountPath || value.startsWith(`${m.mountPath}/`));
    out[name] = mount ? mount.localDir + value.slice(mount.mountPath.length) : value;
  }
  return out;
}

// ---- status, as kubelet writes it (JSON for a patch: times are RFC 3339 strings) ----

interface ContainerStatusJson {
  name: string;
  image: string;
  imageID: string;
  ready: boolean;
  restartCount: number;
  started?: boolean;
  state: Record<string, Record<string, unknown>>;
  lastState?: Record<string, Record<string, unknown>>;
}

export type InitState =
  | { state: "running"; index: number }
  | { state: "failed"; index: number; exitCode: number; message: string; restarts: number }
  | { state: "done" };

/** A pod condition; `why` (reason and message) only while it is False. */
function condition(
  type: string,
  ok: boolean,
  now: string,
  why?: { reason: string; message?: string },
) {
  return {
    type,
    status: ok ? "True" : "False",
    lastTransitionTime: now,
    ...(ok ? {} : why),
  };
}

function initStatus(
  container: V1Container,
  position: number,
  at: InitState,
  now: string,
): ContainerStatusJson {
  const name = container.name;
  const base = { name, image: container.image ?? "", imageID: "", ready: false, restartCount: 0 };
  const done = at.state === "done" || position < at.index;
  if (done) {
    const terminated = { exitCode: 0, reason: "Completed", startedAt: now, finishedAt: now };
    return { ...base, ready: true, started: false, state: { terminated } };
  }
  if (position > at.index) {
    return { ...base, state: { waiting: { reason: "PodInitializing" } } };
  }
  if (at.state === "running") {
    return { ...base, started: true, state: { running: { startedAt: now } } };
  }
  const terminated = {
    exitCode: at.exitCode,
    reason: "Error",
    message: at.message,
    startedAt: now,
    finishedAt: now,
  };
  return {
    ...base,
    restartCount: at.restarts,
    state: {
      waiting: {
        reason: "CrashLoopBackOff",
        message: `back-off restarting failed container ${name}`,
      },
    },
    lastState: { terminated },
  };
}

/**
 * The pod's whole status at `at`, as kubelet reports it: Pending with `Init:i/n` while an init
 * container runs or is backing off, Running (every container shown running and ready, though
 * only init containers are run) once every init container has completed.
 */
export function podStatus(
  pod: V1Pod,
  placement: { podIP: string; hostIP: string; startTime: string },
  at: InitState,
  now: string,
) {
  const inits = pod.spec?.initContainers ?? [];
  const initialized = at.state === "done";
  const pending = inits.filter((_, i) => at.state !== "done" && i >= at.index).map(c => c.name);
  const containers = (pod.spec?.containers ?? []).map(c => ({
    name: c.name,
    image: c.image ?? "",
    imageID: "",
    restartCount: 0,
    ready: initialized,
    started: initialized,
    state: initialized
      ? { running: { startedAt: now } }
      : { waiting: { reason: "PodInitializing" } },
  }));
  const why = {
    reason: "ContainersNotInitialized",
    message: `containers with incomplete status: [${pending.join(" ")}]`,
  };
  const ready = condition("Ready", initialized, now, why);
  return {
    phase: initialized ? "Running" : "Pending",
    podIP: placement.podIP,
    podIPs: [{ ip: placement.podIP }],
    hostIP: placement.hostIP,
    hostIPs: [{ ip: placement.hostIP }],
    startTime: placement.startTime,
    conditions: [
      condition("PodReadyToStartContainers", true, now),
      condition("Initialized", initialized, now, why),
      ready,
      { ...ready, type: "ContainersReady" },
      condition("PodScheduled", true, now),
    ],
    initContainerStatuses: inits.map((c, i) => initStatus(c, i, at, now)),
    containerStatuses: containers,
  };
}
