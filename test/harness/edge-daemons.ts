// A group of real edge-health daemons for integration tests: N local processes, each on its own
// loopback address (any 127.x.y.z works on Linux `lo`), with a Node object per daemon whose
// InternalIP is that address, a zone of their own (the zone ConfigMap lives in the test's
// namespace, so other tests' nodes never join the group), and the HMAC key in a Secret, or for
// the daemons listed in `keyFiles` in a file of their own (as a mounted Secret reaches a node), so
// that a rotation can reach some daemons before others. The kubelet check is on when `kubelet`
// gives the stand-in kubelets' port, CA and token (test/integration/edge-daemon/kubelet-stand-in.ts).
// Partitions are real: iptables DROP rules in a chain of our own on OUTPUT, between the halves'
// addresses (the daemons bind their own address for peer traffic; their API-server connections
// come from 127.0.0.1 and are not affected). Needs root and iptables (hack/system-packages.sh).
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  EDGE_TAINT_ZONE_ADMISSION_KEY,
  EDGE_ZONE_CONFIGMAP,
  EDGE_ZONE_LABEL,
} from "../../core/names";
import { startProcess, type ManagedProcess } from "../../hack/control-plane/processes";
import type { EngineView } from "../../edge-health-daemon/daemon";
import type { TestCluster } from "./cluster";
import { fakeNodes, type FakeNodes } from "./nodes";
import { waitUntil } from "./wait";

const MAIN = resolve(__dirname, "../../edge-health-daemon/main.ts");

export interface DaemonView extends EngineView {
  stats: { accepted: number; rejected: Record<string, number>; writes: number };
}

export interface EdgeDaemonGroup {
  names: string[];
  ips: string[];
  port: number;
  key: Buffer;
  periodSeconds: number;
  url(i: number): string;
  logFile(i: number): string;
  /** Writes these keys (one per line) to daemon i's key file (a `keyFiles` daemon). */
  writeKeyFile(i: number, keys: Buffer[]): void;
  /** Replaces the Secret's keys (what the other daemons read). */
  writeSecret(keys: Buffer[]): Promise<void>;
  view(i: number): Promise<DaemonView>;
  /** SIGKILL: the daemon is gone without a goodbye. */
  kill(i: number): Promise<void>;
  restart(i: number): Promise<void>;
  /** Drops all traffic between the two sets of daemons (by index). */
  partition(a: number[], b: number[]): void;
  heal(): void;
  close(): Promise<void>;
}

function iptables(args: string[]): void {
  execFileSync("iptables", ["-w", ...args], { stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * Applies `rules` (iptables-restore lines of the filter table) in one call: each blocking exec
 * stalls this process, which also serves the stand-in kubelets, so dozens of single calls made
 * every check time out at the moment of a cut and turned a healthy node's votes to "false".
 */
function iptablesRestore(rules: string[]): void {
  execFileSync("iptables-restore", ["--noflush"], {
    input: ["*filter", ...rules, "COMMIT", ""].join("\n"),
    stdio: ["pipe", "ignore", "pipe"],
  });
}

async function waitHealthy(url: string, proc: ManagedProcess): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const healthy = async (): Promise<boolean> =>
    fetch(`${url}/healthz`).then(
      r => r.ok,
      () => false,
    );
  // Generous: seven tsx processes compiling at once on a shared 2-core machine take a while.
  const outcome = await waitUntil(
    `${proc.name} to answer /healthz (its log: ${proc.logFile})`,
    async () => (exited ? "exited" : (await healthy()) && "healthy"),
    90_000,
  );
  if (outcome === "exited") throw new Error(`${proc.name} exited; see ${proc.logFile}`);
}

export async function startEdgeDaemons(options: {
  cluster: TestCluster;
  namespace: string;
  count: number;
  periodSeconds: number;
  /** Daemons (by index) that read the key from a file of their own instead of the Secret. */
  keyFiles?: number[];
  /** The kubelet check against stand-in kubelets; off when absent. */
  kubelet?: (group: { names: string[]; ips: string[]; dir: string }) => Promise<{
    port: number;
    caFile: string;
    tokenFile: string;
  }>;
  /** More flags for every daemon. */
  args?: string[];
}): Promise<EdgeDaemonGroup> {
  const { cluster, namespace, count, periodSeconds } = options;
  const id = randomBytes(3);
  const prefix = `edge-${id.toString("hex")}`;
  // A /24 of our own inside 127/8, so parallel runs never share an address.
  const base = `127.${100 + ((id[0] ?? 0) % 100)}.${id[1] ?? 0}`;
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const ips = names.map((_, i) => `${base}.${10 + i}`);
  const port = 51005;
  const key = Buffer.from(randomBytes(32).toString("hex"));
  const dir = join(cluster.dir, prefix);
  mkdirSync(dir, { recursive: true });

  await cluster.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: "edge-hmac" }, data: { hmackey: key.toString("base64") } },
  });
  await cluster.core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: { name: EDGE_ZONE_CONFIGMAP },
      data: { [EDGE_TAINT_ZONE_ADMISSION_KEY]: "true" },
    },
  });
  const keyFile = (i: number): string => join(dir, `hmac-${i}.key`);
  const writeKeyFile = (i: number, keys: Buffer[]): void =>
    writeFileSync(keyFile(i), Buffer.concat(keys.flatMap(k => [k, Buffer.from("\n")])), {
      mode: 0o600,
    });
  for (const i of options.keyFiles ?? []) writeKeyFile(i, [key]);
  const kubelet = await options.kubelet?.({ names, ips, dir });
  const timeout = periodSeconds * 0.4;
  // With a kubelet: the defaults' weights (peer daemon 0.5 + kubelet 0.5, both must pass).
  // Without one: the peer daemon's health and a TCP dial to its port, half the score each.
  const checks = kubelet
    ? [
        `--check-daemon=timeout=${timeout},retries=0`,
        `--check-kubelet=port=${kubelet.port},ca-file=${kubelet.caFile},token-file=${kubelet.tokenFile},timeout=${timeout},retries=0`,
      ]
    : [
        "--check-kubelet=off",
        `--check-daemon=weight=0.5,timeout=${timeout},retries=0`,
        `--check-tcp=weight=0.5,port=${port},timeout=${timeout},retries=0`,
      ];
  const nodes: FakeNodes = fakeNodes(cluster.kc);
  for (const [i, name] of names.entries()) {
    await nodes.add(name, { [EDGE_ZONE_LABEL]: prefix });
    await cluster.core.patchNodeStatus(
      { name, body: { status: { addresses: [{ type: "InternalIP", address: ips[i] }] } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }

  const procs = new Map<number, ManagedProcess>();
  const start = (i: number): ManagedProcess => {
    const name = names[i] ?? "";
    const proc = startProcess(
      name,
      process.execPath,
      [
        "--import",
        "tsx",
        MAIN,
        `--node-name=${name}`,
        `--listen-address=${ips[i]}`,
        `--port=${port}`,
        `--check-period=${periodSeconds}`,
        `--message-max-age=5`,
        `--zone-namespace=${namespace}`,
        (options.keyFiles ?? []).includes(i)
          ? `--hmac-key-file=${keyFile(i)}`
          : `--hmac-secret=${namespace}/edge-hmac`,
        `--kubeconfig=${cluster.kubeconfigPath}`,
        ...checks,
        ...(options.args ?? []),
      ],
      { logFile: join(dir, `${name}.log`), env: { ...process.env, LOG_LEVEL: "info" } },
    );
    procs.set(i, proc);
    return proc;
  };
  const url = (i: number): string => `http://${ips[i]}:${port}`;
  for (let i = 0; i < count; i++) start(i);
  try {
    for (let i = 0; i < count; i++) await waitHealthy(url(i), procs.get(i) as ManagedProcess);
  } catch (error) {
    // The caller gets no group to close: stop what was started here.
    for (const proc of procs.values()) await proc.stop();
    await nodes.close();
    throw error;
  }

  const chain = `BW-EDGE-${id.toString("hex")}`;
  let chained = false;
  const heal = (): void => {
    if (!chained) return;
    iptables(["-D", "OUTPUT", "-j", chain]);
    iptables(["-F", chain]);
    iptables(["-X", chain]);
    chained = false;
  };
  return {
    names,
    ips,
    port,
    key,
    periodSeconds,
    url,
    logFile: i => join(dir, `${names[i] ?? ""}.log`),
    writeKeyFile,
    async writeSecret(keys) {
      const value = Buffer.concat(keys.flatMap(k => [k, Buffer.from("\n")]));
      await cluster.core.replaceNamespacedSecret({
        name: "edge-hmac",
        namespace,
        body: { metadata: { name: "edge-hmac" }, data: { hmackey: value.toString("base64") } },
      });
    },
    async view(i) {
      const res = await fetch(`${url(i)}/localinfo`);
      return (await res.json()) as DaemonView;
    },
    async kill(i) {
      const proc = procs.get(i);
      if (!proc) return;
      // setpriv execs the command, so this PID is the daemon's own.
      process.kill(proc.pid, "SIGKILL");
      await proc.exited;
    },
    async restart(i) {
      await waitHealthy(url(i), start(i));
    },
    partition(a, b) {
      heal();
      const drops = a.flatMap(x =>
        b.flatMap(y => [
          `-A ${chain} -s ${ips[x] ?? ""} -d ${ips[y] ?? ""} -j DROP`,
          `-A ${chain} -s ${ips[y] ?? ""} -d ${ips[x] ?? ""} -j DROP`,
        ]),
      );
      // The chain, its rules and the jump from OUTPUT land at once: the cut is never partial.
      iptablesRestore([`:${chain} - [0:0]`, ...drops, `-I OUTPUT -j ${chain}`]);
      chained = true;
    },
    heal,
    async close() {
      heal();
      for (const proc of procs.values()) await proc.stop();
      await nodes.close();
    },
  };
}
