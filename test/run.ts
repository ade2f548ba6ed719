// The one test command (`npm test`, and `.ci/run`): unit tests beside the code, then the
// integration tests against one real control plane (etcd, kube-apiserver,
// kube-controller-manager) with the built Pepr module serving its webhooks.
//
//   npm test                         everything
//   npm run test:unit                unit tests only, no control plane
//   npm test -- test/integration     the tests under the given files or folders
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { buildModule, ROOT, writeManifests } from "../packaging/build";
import {
  ensureBinaries,
  startControlPlane,
  type ControlPlane,
} from "../hack/control-plane/control-plane";
import { startPeprModule, type RunningPeprModule } from "../hack/control-plane/pepr-module";
import { stopEverything } from "../hack/control-plane/processes";
import { freePort } from "../hack/control-plane/ports";
import { installCrds } from "../hack/install-crds";
import { issueLoopbackServingCertificate } from "../hack/control-plane/pki";
import {
  ENDPOINT_CA_SECRET,
  publishEndpointCa,
  startPermissionEndpoint,
} from "./harness/permission-endpoint";
import { issueWatcherToken } from "./harness/watcher-identity";
import { CLUSTER_ENV, type TestClusterInfo } from "./harness/cluster";

const SKIP_DIRS = new Set(["node_modules", "dist", ".git", ".bulwark", "manifests"]);
const INTEGRATION_DIR = join(ROOT, "test", "integration");

function findTests(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith(".test.ts") ? [path] : [];
  return readdirSync(path)
    .filter(entry => !SKIP_DIRS.has(entry))
    .flatMap(entry => findTests(join(path, entry)))
    .sort();
}

const log = (message: string): void => console.log(`[test] ${message}`);

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const unitOnly = args.includes("--unit");
  const roots = args.filter(a => !a.startsWith("--")).map(a => resolve(a));
  const all = (roots.length > 0 ? roots : [ROOT]).flatMap(findTests);
  const files = unitOnly ? all.filter(f => !f.startsWith(INTEGRATION_DIR)) : all;
  if (files.length === 0) throw new Error(`no test files under ${roots.join(", ") || ROOT}`);
  const needsCluster = files.some(f => f.startsWith(INTEGRATION_DIR));

  let controlPlane: ControlPlane | undefined;
  let pepr: RunningPeprModule | undefined;
  let permissionEndpoint: Awaited<ReturnType<typeof startPermissionEndpoint>> | undefined;
  const dir = mkdtempSync(join(tmpdir(), "bulwark-test-"));
  let keepLogs = false;
  const cleanup = async (): Promise<void> => {
    await pepr?.stop();
    await controlPlane?.stop();
    await permissionEndpoint?.close();
    // A failed run keeps its logs for the person reading the failure.
    if (!keepLogs) rmSync(dir, { recursive: true, force: true });
  };
  let child: ReturnType<typeof spawn> | undefined;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping tests and the control plane`);
      child?.kill(signal);
      // Whatever has started so far, also half-way through start-up.
      void stopEverything()
        .then(() => rmSync(dir, { recursive: true, force: true }))
        .finally(() => process.exit(130));
    });
  }

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PEPR_MODE: "build",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  };
  try {
    if (needsCluster) {
      const binDir = ensureBinaries(log);
      log("building the Pepr module");
      buildModule({ quiet: true });
      writeManifests();
      controlPlane = await startControlPlane({
        dir: join(dir, "cluster"),
        binDir,
        controllerManager: true,
        log,
      });
      log(`installed CRDs: ${(await installCrds(controlPlane.kubeconfigPath)).join(", ")}`);
      const metricsPort = await freePort();
      // The module reaches the stand-in over HTTPS, trusting only the CA it reads from a Secret,
      // as it reaches the permission server in a cluster; the test controls stay on plain HTTP.
      const serving = issueLoopbackServingCertificate(controlPlane.pki, "permission-endpoint");
      permissionEndpoint = await startPermissionEndpoint({
        cert: readFileSync(serving.certPath, "utf8"),
        key: readFileSync(serving.keyPath, "utf8"),
      });
      const endpointCa = readFileSync(controlPlane.pki.caCertPath, "utf8");
      await publishEndpointCa(controlPlane.kubeconfigPath, endpointCa);
      // The watcher's service-account token, for the revoke call's authentication.
      const revokeTokenPath = join(dir, "pepr-watcher-token");
      await issueWatcherToken(controlPlane.kubeconfigPath, revokeTokenPath);
      pepr = await startPeprModule(controlPlane, {
        root: ROOT,
        log,
        env: {
          BULWARK_METRICS_PORT: String(metricsPort),
          // Pepr's watches can miss events; the guard's resync repairs that, sooner in tests.
          BULWARK_GUARD_RESYNC_SECONDS: "15",
          // The chart's default: statuses say what enforcing would refuse.
          BULWARK_INGRESS_CHECKSUM: "observe",
          BULWARK_SECRET_CHECKSUM: "observe",
          BULWARK_PERMISSION_SERVER: permissionEndpoint.tlsUrl,
          BULWARK_PERMISSION_CA_SECRET: `${ENDPOINT_CA_SECRET.namespace}/${ENDPOINT_CA_SECRET.name}`,
          BULWARK_PERMISSION_SWEEP_SECONDS: "5",
          BULWARK_REVOKE_TOKEN_PATH: revokeTokenPath,
        },
      });
      const info: TestClusterInfo = {
        kubeconfigPath: controlPlane.kubeconfigPath,
        server: controlPlane.server,
        dir: controlPlane.dir,
        binDir,
        peprUrl: pepr.url,
        webhookNames: pepr.webhookNames,
        metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
        permissionEndpointUrl: permissionEndpoint.url,
        permissionServerUrl: permissionEndpoint.tlsUrl ?? "",
        permissionCa: endpointCa,
        watcherPidFile: pepr.watcherPidFile,
      };
      const infoPath = join(dir, "cluster.json");
      writeFileSync(infoPath, JSON.stringify(info));
      Object.assign(env, { [CLUSTER_ENV]: infoPath, KUBECONFIG: controlPlane.kubeconfigPath });
    }
    log(`running ${files.length} test files: ${files.map(f => relative(ROOT, f)).join(" ")}`);
    const code = await new Promise<number>(resolvePromise => {
      child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "--test",
          "--test-concurrency=1",
          "--test-reporter=spec",
          "--test-reporter-destination=stdout",
          `--test-reporter=${join(ROOT, "test", "summary-reporter.mjs")}`,
          "--test-reporter-destination=stdout",
          ...files,
        ],
        { cwd: ROOT, env, stdio: "inherit" },
      );
      child.on("exit", (c, signal) => resolvePromise(c ?? (signal ? 1 : 0)));
    });
    if (code !== 0 && controlPlane) {
      keepLogs = true;
      log(`control-plane and Pepr module logs: ${join(controlPlane.dir, "logs")}`);
    }
    return code;
  } finally {
    await cleanup();
  }
}

main().then(
  code => process.exit(code),
  error => {
    console.error(error);
    process.exit(1);
  },
);
