// The local pod runner: the local stack's STAND-IN FOR KUBELET (no kubelet can run here; never
// shipped in the image). Every second it lists pods and, for those it may run:
// - binds an unscheduled pod (default scheduler) to the first local node its nodeSelector fits;
// - for a pod bound to a local node that is not cut off: gives it an IP from 198.51.100.0/24
//   (data only, nothing sends traffic there), runs each init container that is Bulwark's own
//   `bulwark init` as a local process (`node bin/bulwark.js init`) with the env the pod spec
//   gives it and its projected service-account token requested through the TokenRequest API for
//   that pod, and writes pod status as kubelet does: Init:0/1, then Running (other containers
//   are shown running, never run). A failed init container is restarted with back-off;
// - refuses, with a Warning Event on the pod, a pod whose init containers it cannot run;
// - on deletion, stops what it runs and confirms the deletion (grace period 0) as kubelet does,
//   so the finalizer flow (Bulwark's revoke) decides when the pod disappears.
import { CoreV1Api, type CoreV1Event, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { recordEvent, type EventRecorder } from "../../kube/events";
import { describeError } from "../../kube/api-errors";
import { startProcess, type ManagedProcess } from "../control-plane/processes";
import type { NodeKeeper } from "./nodes";
import type { LocalNode } from "./node-status";
import {
  chooseNode,
  nextPodIp,
  planPod,
  podStatus,
  relocateMounts,
  type InitPlan,
  type ProjectedFile,
  type InitState,
} from "./pod-plan";

const ROOT = join(__dirname, "..", "..");
const BACKOFF_MS = { first: 2000, max: 30_000 };

/** namespace/name@uid: a pod deleted and created again under its name is another pod. */
function podKey(pod: V1Pod): string {
  const { namespace, name, uid } = pod.metadata ?? {};
  return `${namespace}/${name}@${uid}`;
}

export interface PodRunner {
  stop(): Promise<void>;
}

interface Tracked {
  pod: V1Pod;
  ip: string;
  hostIP: string;
  startTime: string;
  process?: ManagedProcess;
  /** Being deleted: nothing more is run. */
  deleted?: boolean;
  /** The deletion confirmed with grace period 0, as kubelet does once its containers stopped. */
  confirmed?: boolean;
}

export function startPodRunner(options: {
  kc: KubeConfig;
  nodes: LocalNode[];
  keeper: NodeKeeper;
  initImage: string;
  dir: string;
  log: (message: string) => void;
}): PodRunner {
  const { kc, nodes, keeper, initImage, dir, log } = options;
  const core = kc.makeApiClient(CoreV1Api);
  const tracked = new Map<string, Tracked>();
  const refused = new Set<string>();
  const busy = new Set<string>();
  const recorder: EventRecorder = {
    create: (namespace: string, event: CoreV1Event) =>
      core.createNamespacedEvent({ namespace, body: event }),
    warn: (message, fields) => log(`${message} ${JSON.stringify(fields)}`),
    reporter: { component: "local-pod-runner", instance: "npm-start" },
  };
  const event = (pod: V1Pod, type: "Normal" | "Warning", reason: string, message: string) =>
    recordEvent(
      recorder,
      { apiVersion: "v1", kind: "Pod", metadata: pod.metadata },
      { type, reason, message },
    );
  const local = (name: string | undefined) => nodes.find(n => n.name === name);

  const writeStatus = async (t: Tracked, at: InitState): Promise<void> => {
    const status = podStatus(
      t.pod,
      { podIP: t.ip, hostIP: t.hostIP, startTime: t.startTime },
      at,
      new Date().toISOString(),
    );
    await core.patchNamespacedPodStatus({
      name: t.pod.metadata?.name ?? "",
      namespace: t.pod.metadata?.namespace ?? "",
      body: [{ op: "replace", path: "/status", value: status }],
    });
  };

  /** A bound service-account token for this pod, as a kubelet requests one. */
  const podToken = async (pod: V1Pod, audience: string | undefined, seconds: number) => {
    const request = await core.createNamespacedServiceAccountToken({
      name: pod.spec?.serviceAccountName ?? "default",
      namespace: pod.metadata?.namespace ?? "",
      body: {
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds: seconds,
          boundObjectRef: {
            apiVersion: "v1",
            kind: "Pod",
            name: pod.metadata?.name,
            uid: pod.metadata?.uid,
          },
        },
      },
    });
    return request.status?.token ?? "";
  };

  /** What one projected file holds: path (under its mount) to content. */
  const fileContents = async (pod: V1Pod, file: ProjectedFile): Promise<Record<string, string>> => {
    const { source } = file;
    if ("value" in source) return { [file.path ?? ""]: source.value };
    if ("token" in source) {
      const { audience, expirationSeconds } = source.token;
      return { [file.path ?? ""]: await podToken(pod, audience, expirationSeconds) };
    }
    const { name, key, optional } = source.configMap;
    const namespace = pod.metadata?.namespace ?? "";
    const data: Record<string, string> = await core
      .readNamespacedConfigMap({ name, namespace })
      .then(
        c => c.data ?? {},
        (error: unknown) => {
          if (optional) return {};
          throw new Error(
            `ConfigMap ${namespace}/${name} for volume ${file.volume}: ${describeError(error)}`,
          );
        },
      );
    if (key === undefined) return data;
    return key in data ? { [file.path ?? key]: data[key] ?? "" } : {};
  };

  /** Fills the container's projected volumes under the pod's folder; their mount points there. */
  const writeVolumes = async (t: Tracked, plan: InitPlan, podDir: string) => {
    const mounts = new Map<string, string>();
    for (const file of plan.files) {
      const localDir = join(podDir, "volumes", file.volume);
      for (const [path, content] of Object.entries(await fileContents(t.pod, file))) {
        const target = join(localDir, path);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, content, { mode: 0o600 });
      }
      mounts.set(file.mountPath, localDir);
    }
    return [...mounts].map(([mountPath, localDir]) => ({ mountPath, localDir }));
  };

  /** Runs one init container to its end; restarts it with back-off until it succeeds. */
  /**
   * One run of an init container: its exit code and last log line; undefined when its volumes
   * could not be filled (a Warning FailedMount Event says why, as kubelet's does).
   */
  const runOnce = async (t: Tracked, plan: InitPlan, index: number, podDir: string) => {
    let env: Record<string, string>;
    try {
      // Filled again for each run: a kubelet refreshes projected tokens too.
      env = relocateMounts(plan.env, await writeVolumes(t, plan, podDir));
    } catch (error) {
      const message = `init container ${plan.container}: ${describeError(error)}`;
      log(`pod ${t.pod.metadata?.namespace}/${t.pod.metadata?.name}: ${message}`);
      await event(t.pod, "Warning", "FailedMount", message);
      return undefined;
    }
    await writeStatus(t, { state: "running", index });
    const logFile = join(podDir, `${plan.container}.log`);
    t.process = startProcess(
      `${t.pod.metadata?.name}/${plan.container}`,
      process.execPath,
      [join(ROOT, "bin", "bulwark.js"), "init"],
      { cwd: ROOT, logFile, env: { PATH: process.env.PATH, ...env } },
    );
    const code = await t.process.exited;
    t.process = undefined;
    const message = readFileSync(logFile, "utf8").trimEnd().split("\n").pop() ?? "";
    return { exitCode: typeof code === "number" ? code : 137, message };
  };

  /** Runs one init container until it succeeds, restarting it with back-off as kubelet does. */
  const runInit = async (
    t: Tracked,
    plan: InitPlan,
    index: number,
    podDir: string,
  ): Promise<boolean> => {
    let restarts = 0;
    for (let delay = BACKOFF_MS.first; !t.deleted; delay = Math.min(delay * 2, BACKOFF_MS.max)) {
      const run = await runOnce(t, plan, index, podDir);
      if (run?.exitCode === 0) return true;
      if (t.deleted) return false;
      if (run) await writeStatus(t, { state: "failed", index, ...run, restarts: ++restarts });
      await new Promise(resolve => setTimeout(resolve, delay));
    }
    return false;
  };

  /** Refuses the pod with an Event, once, when it cannot run here; else runs it in the background. */
  const start = async (pod: V1Pod, key: string): Promise<void> => {
    const ip = nextPodIp(new Set([...tracked.values()].map(t => t.ip)));
    if (!ip) throw new Error("no free pod IP in 198.51.100.0/24");
    const hostIP = local(pod.spec?.nodeName)?.address ?? "";
    // With the IP known, the Downward API fields resolve (POD_IP is status.podIP).
    const placed = { ...pod, status: { ...pod.status, podIP: ip, hostIP } };
    const plan = planPod(placed, initImage);
    if (!plan.ok) {
      if (refused.has(key)) return;
      refused.add(key);
      log(`pod ${key} refused: ${plan.reason}`);
      await event(
        pod,
        "Warning",
        "LocalRunnerCannotRun",
        `the local stack's pod runner (a stand-in for kubelet) cannot run this pod: ${plan.reason}`,
      );
      return;
    }
    const t: Tracked = { pod: placed, ip, hostIP, startTime: new Date().toISOString() };
    tracked.set(key, t);
    void run(t, key, plan.inits).catch(error => log(`pod runner: ${key}: ${describeError(error)}`));
  };

  const run = async (t: Tracked, key: string, inits: InitPlan[]): Promise<void> => {
    const { metadata } = t.pod;
    const podDir = join(dir, `${metadata?.namespace}_${metadata?.name}_${metadata?.uid}`);
    mkdirSync(podDir, { recursive: true });
    // The pod IP is written first: the permission server reads it from the pod.
    await writeStatus(t, inits.length ? { state: "running", index: 0 } : { state: "done" });
    for (const [index, init] of inits.entries()) {
      if (!(await runInit(t, init, index, podDir))) return;
    }
    await writeStatus(t, { state: "done" });
    log(`pod ${key} is Running on ${t.pod.spec?.nodeName} (IP ${t.ip}; only init containers run)`);
  };

  /** Kubelet's side of a deletion: stop what runs, then confirm with grace period 0. */
  const finish = async (pod: V1Pod, key: string): Promise<void> => {
    const t = tracked.get(key) ?? { pod, ip: "", hostIP: "", startTime: "" };
    tracked.set(key, t);
    if (t.confirmed) return;
    t.deleted = true;
    await t.process?.stop();
    // In the body: with a body, the API server reads no DeleteOptions from the query.
    await core.deleteNamespacedPod({
      name: pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? "",
      body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } },
    });
    t.confirmed = true;
  };

  const bind = async (pod: V1Pod): Promise<void> => {
    const candidates = nodes
      .filter(n => !keeper.isCut(n.name))
      .map(n => ({ name: n.name, labels: { "kubernetes.io/hostname": n.name, ...n.labels } }));
    const target = chooseNode(pod, candidates);
    if (!target) return;
    await core.createNamespacedPodBinding({
      name: pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? "",
      body: {
        metadata: { name: pod.metadata?.name },
        target: { apiVersion: "v1", kind: "Node", name: target },
      },
    });
  };

  const handle = async (pod: V1Pod): Promise<void> => {
    const key = podKey(pod);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return pod.metadata?.deletionTimestamp ? undefined : bind(pod);
    // A cut-off node's kubelet cannot reach the API server: nothing is written for its pods.
    if (!local(nodeName) || keeper.isCut(nodeName)) return;
    if (pod.metadata?.deletionTimestamp) return finish(pod, key);
    if (!tracked.has(key)) return start(pod, key);
  };

  const tick = async (): Promise<void> => {
    const pods = await core.listPodForAllNamespaces();
    for (const pod of pods.items) {
      const key = `${pod.metadata?.uid}`;
      if (busy.has(key)) continue;
      busy.add(key);
      void handle(pod)
        .catch(error =>
          log(
            `pod runner: ${pod.metadata?.namespace}/${pod.metadata?.name}: ${describeError(error)}`,
          ),
        )
        .finally(() => busy.delete(key));
    }
  };
  const timer = setInterval(() => void tick().catch(() => {}), 1000);
  log(`pod runner (a stand-in for kubelet) runs pods on ${nodes.map(n => n.name).join(", ")}`);
  return {
    async stop() {
      clearInterval(timer);
      for (const t of tracked.values()) await t.process?.stop();
    },
  };
}
