// `npm start`: Bulwark on this machine with no cluster. A real etcd, kube-apiserver and
// kube-controller-manager, Bulwark's CRDs, the Pepr module serving its webhooks from a local
// process, and the workloads as local processes: the permission server, the gateway
// (bulwark-gateway-0) with a demo site (Ingresses demo, demo-canary, secure), and a local edge
// zone of three nodes with their edge-health daemons. A node keeper keeps every node Ready
// (status and Lease, as kubelets would) and a pod runner, the stand-in for kubelet, runs pods'
// `bulwark init` init containers. Prints "Bulwark is ready" when every part is up; SIGINT/SIGTERM
// stop everything.
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildModule, MODULE_MANIFEST, ROOT, writeManifests } from "../packaging/build";
import {
  DEFAULT_CONTROLLERS,
  ensureBinaries,
  startControlPlane,
} from "./control-plane/control-plane";
import { installCrds } from "./install-crds";
import { startPeprModule } from "./control-plane/pepr-module";
import { stopEverything, type ManagedProcess } from "./control-plane/processes";
import { edgeNodes, startEdgeZone } from "./local-stack/edge-health";
import { machineAddress, startGateway } from "./local-stack/gateway";
import { startDemoSite } from "./local-stack/demo-site";
import { keepNodes } from "./local-stack/nodes";
import { startPodRunner } from "./local-stack/pod-runner";
import { loadKubeConfig } from "./control-plane/kube";
import { permissionServerEnv, startPermissionServer } from "./local-stack/permission-server";
import type { LocalWorkload, LocalWorkloadContext } from "./local-stack/workload";

// BULWARK_STATE_DIR lets a test run a second stack beside a developer's own.
const STATE_DIR = process.env.BULWARK_STATE_DIR ?? join(ROOT, ".bulwark");
const log = (message: string): void => console.log(`[bulwark] ${message}`);
/** The image the module names in injected init containers; the pod runner runs those locally. */
const INIT_IMAGE = process.env.BULWARK_INIT_IMAGE ?? "bulwark:local";
/** Where pods run by default (the edge zone's nodes take pods that select them). */
const LOCAL_NODE = "bulwark-local";

async function main(): Promise<void> {
  let stopping = false;
  // Stops whatever has started so far, also half-way through start-up.
  const workloads: LocalWorkload[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  const stop = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`${reason}: stopping`);
    // Workloads first, newest first, each with its own graceful stop (the gateway drains).
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
    for (const workload of workloads.reverse()) await workload.stop().catch(() => {});
    await stopEverything();
    log("stopped");
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stop(signal).finally(() => process.exit(0)));
  }

  log(
    "step 1/6: control-plane binaries (the first build takes a while; later runs reuse the cache)",
  );
  const binDir = ensureBinaries(log);
  log("step 2/6: building the Pepr module and manifests/");
  // The tests start stacks after test/run.ts has built the module once: they may reuse it.
  if (process.env.BULWARK_REUSE_MODULE_BUILD === "1" && existsSync(MODULE_MANIFEST)) {
    log(`reusing the Pepr module already built in ${dirname(MODULE_MANIFEST)}`);
  } else {
    buildModule({ quiet: true });
    writeManifests();
  }

  log("step 3/6: starting etcd, kube-apiserver and kube-controller-manager");
  const runDir = join(STATE_DIR, "run");
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const controlPlane = await startControlPlane({
    dir: runDir,
    binDir,
    // As in a cluster, every namespace gets kube-root-ca.crt, which pods' token volumes mount.
    controllerManager: { controllers: [...DEFAULT_CONTROLLERS, "root-ca-cert-publisher"] },
    // A node voted unhealthy is evicted within half a minute, not the default five.
    defaultTolerationSeconds: 30,
    log,
  });
  const kubeconfig = join(STATE_DIR, "kubeconfig");
  copyFileSync(controlPlane.kubeconfigPath, kubeconfig);
  const kubectlDir = linkKubectl(binDir);
  const crds = await installCrds(controlPlane.kubeconfigPath);
  log(`installed ${crds.length} CRDs${crds.length ? `: ${crds.join(", ")}` : ""}`);

  // Every node Ready from the start, as kubelets keep theirs: no node is Unknown unless cut.
  const nodes = [{ name: LOCAL_NODE, address: machineAddress(), labels: {} }, ...edgeNodes()];
  const kc = loadKubeConfig(controlPlane.kubeconfigPath);
  const keeper = await keepNodes({ kc, runDir, nodes, log });
  cleanups.push(() => keeper.stop());

  const context = (name: string): LocalWorkloadContext => ({
    kubeconfigPath: controlPlane.kubeconfigPath,
    dir: join(runDir, name),
    log,
    env: {},
  });
  // The permission server comes before the Pepr module: the module's environment names it and
  // the token file it writes (the watcher's identity for revoke calls).
  log("step 4/6: starting the permission server");
  const permissionContext = context("permission-server");
  workloads.push(await startPermissionServer(permissionContext));

  log(
    "step 5/6: starting the Pepr module (admission + watch), the gateway and the edge-health daemon",
  );
  const metricsPort = Number(process.env.BULWARK_METRICS_PORT ?? 9464);
  const pepr = await startPeprModule(controlPlane, {
    root: ROOT,
    log,
    env: {
      BULWARK_METRICS_PORT: String(metricsPort),
      BULWARK_INIT_IMAGE: INIT_IMAGE,
      ...permissionServerEnv(permissionContext),
    },
  });
  workloads.push(await startGateway(context("gateway")));
  workloads.push(await startDemoSite(context("demo-site")));

  log("step 6/6: the edge zone (three nodes, three edge-health daemons) and the pod runner");
  workloads.push(await startEdgeZone({ ...context("edge-zone"), runDir, nodes: nodes.slice(1) }));
  const runner = startPodRunner({
    kc,
    nodes,
    keeper,
    initImage: INIT_IMAGE,
    dir: join(runDir, "pods"),
    log,
  });
  cleanups.push(() => runner.stop());

  console.log(
    [
      "",
      `  API server     ${controlPlane.server}`,
      `  kubectl        export KUBECONFIG=${kubeconfig} PATH=${kubectlDir}:$PATH`,
      `  Pepr module    admission ${pepr.url} (webhooks ${pepr.webhookNames.join(", ")}), watcher PID in ${pepr.watcherPidFile}`,
      `  metrics        http://127.0.0.1:${metricsPort}/metrics`,
      `  logs           ${join(runDir, "logs")}`,
      "",
      ...workloads.flatMap(w => w.lines),
      `  nodes          ${nodes.map(n => n.name).join(", ")}: kept Ready (status and Lease) by the stack`,
      `  pod runner     a stand-in for kubelet: binds pods to ${LOCAL_NODE} (or the node their nodeSelector names),`,
      "                 gives them an IP in 198.51.100.0/24, runs their bulwark-init as a local process, writes their status",
      `                 pods' logs in ${join(runDir, "pods")}`,
      "",
      "Bulwark is ready",
      "Press Ctrl-C to stop.",
    ].join("\n"),
  );
  const watched: ManagedProcess[] = [
    ...controlPlane.processes,
    pepr.process,
    ...workloads.flatMap(w => w.processes),
  ];
  const exits = watched.map(p => p.exited.then(code => ({ p, code })));
  const { p, code } = await Promise.race(exits);
  if (!stopping) {
    console.error(`[bulwark] ${p.name} exited unexpectedly (${code}); see ${p.logFile}`);
    await stop("a component failed");
    process.exit(1);
  }
}

/**
 * `.bulwark/bin/kubectl`: the kubectl built with the control plane (build.sh), so the README's
 * blocks need no kubectl on the machine and speak the API server's own version.
 */
function linkKubectl(binDir: string): string {
  const dir = join(STATE_DIR, "bin");
  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, "kubectl"), { force: true });
  symlinkSync(join(binDir, "kubectl"), join(dir, "kubectl"));
  return dir;
}

main().catch(async error => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
