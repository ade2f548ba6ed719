// A real etcd + kube-apiserver (+ optionally kube-controller-manager) on loopback, for the test
// suite and the local stack. Binaries come from build.sh; every run gets fresh certificates,
// free ports and an empty etcd.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join, resolve } from "node:path";
import {
  createPki,
  createServiceAccountKeys,
  issueCertificate,
  issueLoopbackServingCertificate,
  type Pki,
} from "./pki";
import { freePort } from "./ports";
import { startProcess, stopAll, type ManagedProcess } from "./processes";

export interface ControllerManagerOptions {
  /** How long a node may miss heartbeats before it is marked Unknown (Kubernetes: 50s). */
  nodeMonitorGracePeriod?: string;
  controllers?: string[];
}

export interface ControlPlaneOptions {
  /** Working folder; must be empty or absent. Certificates, etcd data and logs go here. */
  dir: string;
  /** Start kube-controller-manager (node lifecycle, endpoints, GC, namespace deletion). */
  controllerManager?: boolean | ControllerManagerOptions;
  /** `tolerationSeconds` that admission adds for not-ready/unreachable taints (Kubernetes: 300). */
  defaultTolerationSeconds?: number;
  /** Folder with kube-apiserver, kube-controller-manager and etcd; default: build.sh's cache. */
  binDir?: string;
  /** Serve the API server's /debug/pprof (benchmarks: hack/bench/admission.ts --apiserver-profile). */
  profiling?: boolean;
  log?: (message: string) => void;
}

export interface ControlPlane {
  readonly dir: string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly pki: Pki;
  readonly processes: ManagedProcess[];
  stop(): Promise<void>;
}

const HERE = __dirname;
export const DEFAULT_CONTROLLERS = [
  "node-lifecycle-controller",
  "taint-eviction-controller",
  "endpoints-controller",
  "endpointslice-controller",
  "garbage-collector-controller",
  "namespace-controller",
  "serviceaccount-controller",
  // Workloads: tests create pods through Deployments, ReplicaSets, StatefulSets and Jobs.
  "deployment-controller",
  "replicaset-controller",
  "statefulset-controller",
  "job-controller",
];

/** Builds the binaries if they are not cached yet and returns their folder. */
export function ensureBinaries(log: (message: string) => void = () => {}): string {
  const script = join(HERE, "build.sh");
  const cached = execFileSync("bash", [script, "--print-bin-dir"], { encoding: "utf8" }).trim();
  log(`control-plane binaries: ${cached}`);
  const out = execFileSync("bash", [script], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return out.trim().split("\n").pop() ?? cached;
}

export function kubeconfigFor(
  server: string,
  pki: Pki,
  client: { certPath: string; keyPath: string },
): string {
  const b64 = (path: string): string => readFileSync(path).toString("base64");
  // JSON is YAML: every kubeconfig reader accepts it.
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "bulwark", cluster: { server, "certificate-authority-data": b64(pki.caCertPath) } },
      ],
      users: [
        {
          name: "admin",
          user: {
            "client-certificate-data": b64(client.certPath),
            "client-key-data": b64(client.keyPath),
          },
        },
      ],
      contexts: [{ name: "bulwark", context: { cluster: "bulwark", user: "admin" } }],
      "current-context": "bulwark",
    },
    null,
    2,
  );
}

function httpsStatus(url: string, ca: string): Promise<number> {
  return new Promise(resolvePromise => {
    const req = request(url, { ca, timeout: 2000 }, res => {
      res.resume();
      resolvePromise(res.statusCode ?? 0);
    });
    req.on("error", () => resolvePromise(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

function logTail(path: string, lines = 15): string {
  return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** Polls `url` until it answers 200, failing early if `process` exits. */
export async function waitForHttpsOk(
  url: string,
  ca: string,
  process: ManagedProcess,
  timeoutMs: number,
): Promise<void> {
  let exited: number | string | undefined;
  void process.exited.then(code => (exited = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== undefined)
      throw new Error(`${process.name} exited (${exited}):\n${logTail(process.logFile)}`);
    if ((await httpsStatus(url, ca)) === 200) return;
    await new Promise(r => setTimeout(r, 250));
  }
  throw new Error(
    `${process.name} not ready at ${url} after ${timeoutMs}ms; see ${process.logFile}`,
  );
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const dir = resolve(options.dir);
  const binDir = options.binDir ?? ensureBinaries(log);
  for (const sub of ["pki", "etcd", "logs"]) mkdirSync(join(dir, sub), { recursive: true });

  const pki = createPki(join(dir, "pki"));
  const serving = issueLoopbackServingCertificate(pki, "apiserver");
  const admin = issueCertificate(pki, {
    name: "admin",
    commonName: "bulwark-admin",
    organizations: ["system:masters"],
    usage: "clientAuth",
  });
  const saKeys = createServiceAccountKeys(pki);
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(kubeconfigPath, kubeconfigFor(server, pki, admin), { mode: 0o600 });

  const processes: ManagedProcess[] = [];
  const stop = (): Promise<void> => stopAll(processes);
  const logFile = (name: string): string => join(dir, "logs", `${name}.log`);
  try {
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    log(`starting etcd on ${etcdUrl}`);
    processes.push(
      startProcess(
        "etcd",
        join(binDir, "etcd"),
        [
          "--name=bulwark",
          `--data-dir=${join(dir, "etcd")}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=bulwark=${peerUrl}`,
          "--unsafe-no-fsync",
          "--log-level=warn",
        ],
        { logFile: logFile("etcd") },
      ),
    );

    const tolerations =
      options.defaultTolerationSeconds === undefined
        ? []
        : [
            `--default-not-ready-toleration-seconds=${options.defaultTolerationSeconds}`,
            `--default-unreachable-toleration-seconds=${options.defaultTolerationSeconds}`,
          ];
    log(`starting kube-apiserver on ${server}`);
    const apiserver = startProcess(
      "kube-apiserver",
      join(binDir, "kube-apiserver"),
      [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(dir, "pki")}`,
        `--tls-cert-file=${serving.certPath}`,
        `--tls-private-key-file=${serving.keyPath}`,
        `--client-ca-file=${pki.caCertPath}`,
        "--authorization-mode=RBAC",
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${saKeys.publicKeyPath}`,
        `--service-account-signing-key-file=${saKeys.privateKeyPath}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--allow-privileged=true",
        // Without the controller manager no default ServiceAccounts exist, so pods could not be
        // created with the ServiceAccount plugin on; with it, pods are admitted as in a cluster.
        ...(options.controllerManager ? [] : ["--disable-admission-plugins=ServiceAccount"]),
        "--endpoint-reconciler-type=none",
        "--enable-priority-and-fairness=false",
        `--profiling=${options.profiling === true}`,
        ...tolerations,
      ],
      { logFile: logFile("kube-apiserver") },
    );
    processes.push(apiserver);
    await waitForHttpsOk(`${server}/readyz`, pki.caPem, apiserver, 120_000);
    log("kube-apiserver is ready");

    if (options.controllerManager) {
      const cm = options.controllerManager === true ? {} : options.controllerManager;
      processes.push(
        startProcess(
          "kube-controller-manager",
          join(binDir, "kube-controller-manager"),
          [
            `--kubeconfig=${kubeconfigPath}`,
            "--leader-elect=false",
            "--secure-port=0",
            `--controllers=${(cm.controllers ?? DEFAULT_CONTROLLERS).join(",")}`,
            "--node-monitor-period=1s",
            `--node-monitor-grace-period=${cm.nodeMonitorGracePeriod ?? "8s"}`,
            "--node-startup-grace-period=10s",
            `--root-ca-file=${pki.caCertPath}`,
            `--service-account-private-key-file=${saKeys.privateKeyPath}`,
          ],
          { logFile: logFile("kube-controller-manager") },
        ),
      );
      log("kube-controller-manager started");
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { dir, server, kubeconfigPath, pki, processes, stop };
}
