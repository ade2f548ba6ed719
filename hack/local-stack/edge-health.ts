// The local edge zone of `npm start`: three Nodes (bulwark-edge-1..3, zone `demo`), each with an
// edge-health daemon as a local process on its own loopback address (127.0.0.2-4; any 127.x.y.z
// works on Linux `lo`) and that address as its InternalIP, the zone ConfigMap that makes the zone a
// voting group, and one HMAC key file they share. There is no kubelet, so the kubelet check is off
// and the peer-daemon check decides. The node keeper (nodes.ts) keeps their status and Leases.
// `npm run demo:kill -- NODE` leaves a marker that this polls: the node's daemon is SIGKILLed (not
// a failure of the stack) and restarted by `demo:heal`.
import { CoreV1Api, type KubernetesObject } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  EDGE_HEALTH_ANNOTATION,
  EDGE_TAINT_ZONE_ADMISSION_KEY,
  EDGE_ZONE_CONFIGMAP,
  EDGE_ZONE_LABEL,
} from "../../core/names";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { waitUntil } from "../../test/harness/wait";
import { startProcess, type ManagedProcess } from "../control-plane/processes";
import { demoDir, markerPath, ZONE_FILE, type ZoneInfo } from "./demo-control";
import type { LocalNode } from "./node-status";
import type { LocalWorkload, LocalWorkloadContext } from "./workload";

export const EDGE_ZONE = "demo";
/** Not the daemons' default 51005, which the edge-daemon tests use on their own addresses. */
const DEFAULT_EDGE_PORT = "51105";
/** Seconds: short, so a cut or a kill shows within a few seconds. */
const CHECK_PERIOD = 2;

/** The zone's nodes: bulwark-edge-N on 127.0.0.(N+1). */
export function edgeNodes(count = 3): LocalNode[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `bulwark-edge-${i + 1}`,
    address: `127.0.0.${i + 2}`,
    labels: { [EDGE_ZONE_LABEL]: EDGE_ZONE },
  }));
}

function daemonArgs(node: LocalNode, port: string, kubeconfigPath: string, keyFile: string) {
  return [
    "--import",
    "tsx",
    resolve(__dirname, "../../edge-health-daemon/main.ts"),
    `--node-name=${node.name}`,
    `--listen-address=${node.address}`,
    `--port=${port}`,
    `--check-period=${CHECK_PERIOD}`,
    `--kubeconfig=${kubeconfigPath}`,
    `--hmac-key-file=${keyFile}`,
    "--check-kubelet=off",
    "--check-daemon=weight=1,retries=0",
  ];
}

export async function startEdgeZone(
  context: LocalWorkloadContext & { runDir: string; nodes: LocalNode[] },
): Promise<LocalWorkload> {
  const { kubeconfigPath, dir, log, nodes, runDir } = context;
  const env = { ...process.env, ...context.env };
  const port = env.BULWARK_EDGE_PORT ?? DEFAULT_EDGE_PORT;
  const kc = loadKubeConfig(kubeconfigPath);
  await applyOrThrow(kc, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: EDGE_ZONE_CONFIGMAP, namespace: "kube-system" },
      data: { [EDGE_TAINT_ZONE_ADMISSION_KEY]: "true" },
    } as KubernetesObject,
  ]);
  mkdirSync(dir, { recursive: true });
  const keyFile = join(dir, "hmac.key");
  writeFileSync(keyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
  const url = (node: LocalNode): string => `http://${node.address}:${port}`;

  const running = new Map<string, ManagedProcess>();
  const start = (node: LocalNode): ManagedProcess => {
    const proc = startProcess(
      node.name,
      process.execPath,
      daemonArgs(node, port, kubeconfigPath, keyFile),
      { logFile: join(dir, `${node.name}.log`), env },
    );
    running.set(node.name, proc);
    return proc;
  };
  // Each daemon as the stack watches it: an exit counts as a failure unless demo:kill asked for it.
  const watched = nodes.map(node => {
    const proc = start(node);
    const exited = proc.exited.then(code =>
      existsSync(markerPath(runDir, "kill", node.name)) ? new Promise<never>(() => {}) : code,
    );
    return { ...proc, exited };
  });
  for (const node of nodes) {
    await waitUntil(
      `the edge-health daemon of ${node.name} at ${url(node)}/healthz`,
      async () =>
        fetch(`${url(node)}/healthz`).then(
          r => r.ok,
          () => false,
        ),
      90_000,
    );
  }
  // Ready means voted: each node carries its peers' "true" (a few check periods after start).
  const core = kc.makeApiClient(CoreV1Api);
  await waitUntil(
    `the edge daemons to vote ${nodes.map(n => n.name).join(", ")} healthy`,
    async () => {
      const read = await Promise.all(nodes.map(n => core.readNode({ name: n.name })));
      return read.every(n => n.metadata?.annotations?.[EDGE_HEALTH_ANNOTATION] === "true");
    },
    90_000,
  );
  const zone: ZoneInfo = {
    zone: EDGE_ZONE,
    nodes: nodes.map(n => ({ name: n.name, address: n.address, daemon: url(n) })),
  };
  mkdirSync(demoDir(runDir), { recursive: true });
  writeFileSync(join(demoDir(runDir), ZONE_FILE), JSON.stringify(zone, null, 2));

  // demo:kill and demo:heal, as markers come and go.
  const timer = setInterval(() => {
    for (const node of nodes) {
      const proc = running.get(node.name);
      const killed = existsSync(markerPath(runDir, "kill", node.name));
      if (killed && proc) {
        running.delete(node.name);
        process.kill(proc.pid, "SIGKILL");
        log(`edge-health daemon of ${node.name} killed (demo:kill)`);
      } else if (!killed && !proc) {
        start(node);
        log(`edge-health daemon of ${node.name} restarted (demo:heal)`);
      }
    }
  }, 500);
  log(`edge zone ${EDGE_ZONE}: daemons on ${nodes.map(url).join(", ")}`);
  return {
    processes: watched,
    stop: async () => {
      clearInterval(timer);
      for (const proc of running.values()) await proc.stop();
    },
    lines: [
      `  edge zone      ${EDGE_ZONE}: ${nodes.map(n => `${n.name} ${url(n)}/localinfo`).join(", ")}`,
      `                 kubectl get nodes -L ${EDGE_ZONE_LABEL}; npm run demo:cut|demo:kill|demo:heal -- NODE; logs in ${dir}`,
    ],
  };
}
