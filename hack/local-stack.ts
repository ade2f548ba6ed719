// `npm start`: Bulwark on this machine with no cluster. A real etcd, kube-apiserver and
// kube-controller-manager, Bulwark's CRDs, the Pepr module serving its webhooks from a local
// process, and the workloads as local processes: the permission server, the gateway
// (bulwark-gateway-0) and one edge-health daemon. Prints "Bulwark is ready" when every part is up;
// SIGINT/SIGTERM stop everything.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildModule, ROOT, writeManifests } from "../packaging/build";
import { ensureBinaries, startControlPlane } from "./control-plane/control-plane";
import { installCrds } from "./install-crds";
import { startPeprModule } from "./control-plane/pepr-module";
import { stopEverything, type ManagedProcess } from "./control-plane/processes";
import { startEdgeHealth } from "./local-stack/edge-health";
import { startGateway } from "./local-stack/gateway";
import { permissionServerEnv, startPermissionServer } from "./local-stack/permission-server";
import type { LocalWorkload, LocalWorkloadContext } from "./local-stack/workload";

// BULWARK_STATE_DIR lets a test run a second stack beside a developer's own.
const STATE_DIR = process.env.BULWARK_STATE_DIR ?? join(ROOT, ".bulwark");
const log = (message: string): void => console.log(`[bulwark] ${message}`);

async function main(): Promise<void> {
  let stopping = false;
  // Stops whatever has started so far, also half-way through start-up.
  const workloads: LocalWorkload[] = [];
  const stop = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`${reason}: stopping`);
    // Workloads first, newest first, each with its own graceful stop (the gateway drains).
    for (const workload of workloads.reverse()) await workload.stop().catch(() => {});
    await stopEverything();
    log("stopped");
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stop(signal).finally(() => process.exit(0)));
  }

  log(
    "step 1/5: control-plane binaries (the first build takes a while; later runs reuse the cache)",
  );
  const binDir = ensureBinaries(log);
  log("step 2/5: building the Pepr module and manifests/");
  buildModule({ quiet: true });
  writeManifests();

  log("step 3/5: starting etcd, kube-apiserver and kube-controller-manager");
  const runDir = join(STATE_DIR, "run");
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const controlPlane = await startControlPlane({
    dir: runDir,
    binDir,
    controllerManager: true,
    log,
  });
  const kubeconfig = join(STATE_DIR, "kubeconfig");
  copyFileSync(controlPlane.kubeconfigPath, kubeconfig);
  const crds = await installCrds(controlPlane.kubeconfigPath);
  log(`installed ${crds.length} CRDs${crds.length ? `: ${crds.join(", ")}` : ""}`);

  const context = (name: string): LocalWorkloadContext => ({
    kubeconfigPath: controlPlane.kubeconfigPath,
    dir: join(runDir, name),
    log,
    env: {},
  });
  // The permission server comes before the Pepr module: the module's environment names it and
  // the token file it writes (the watcher's identity for revoke calls).
  log("step 4/5: starting the permission server");
  const permissionContext = context("permission-server");
  workloads.push(await startPermissionServer(permissionContext));

  log(
    "step 5/5: starting the Pepr module (admission + watch), the gateway and the edge-health daemon",
  );
  const metricsPort = Number(process.env.BULWARK_METRICS_PORT ?? 9464);
  const pepr = await startPeprModule(controlPlane, {
    root: ROOT,
    log,
    env: { BULWARK_METRICS_PORT: String(metricsPort), ...permissionServerEnv(permissionContext) },
  });
  workloads.push(await startGateway(context("gateway")));
  workloads.push(await startEdgeHealth(context("edge-health")));

  console.log(
    [
      "",
      `  API server     ${controlPlane.server}`,
      `  kubeconfig     export KUBECONFIG=${kubeconfig}`,
      `  Pepr module    admission ${pepr.url} (webhooks ${pepr.webhookNames.join(", ")}), watcher PID in ${pepr.watcherPidFile}`,
      `  metrics        http://127.0.0.1:${metricsPort}/metrics`,
      `  logs           ${join(runDir, "logs")}`,
      "",
      ...workloads.flatMap(w => w.lines),
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

main().catch(async error => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
