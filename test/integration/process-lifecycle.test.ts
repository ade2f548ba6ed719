// No orphans: control-plane processes die with whatever started them, and `npm start` stops
// every process it started on SIGINT.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../packaging/build";
import { applyOrThrow, loadKubeConfig } from "../../hack/control-plane/kube";
import { waitUntil } from "../harness/wait";
import { freePort } from "../../hack/control-plane/ports";
import { testCluster } from "../harness/cluster";
import { endpointSlice, ingress, startBackend, waitServed } from "./gateway/harness";

const cluster = testCluster();

/** A PID counts as gone once it is reaped or a zombie (it can no longer run). */
function running(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  const state = readFileSync(stat, "utf8").split(") ")[1]?.[0];
  return state !== "Z" && state !== "X";
}

/** PIDs of all processes whose parent is `pid`, and theirs. */
function descendants(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return children.flatMap(child => [child, ...(running(child) ? descendants(child) : [])]);
}

function collectOutput(child: ChildProcess): () => string {
  let output = "";
  child.stdout?.on("data", chunk => (output += chunk));
  child.stderr?.on("data", chunk => (output += chunk));
  return () => output;
}

describe("process lifecycle", () => {
  it("kills etcd and kube-apiserver when the process that started them is SIGKILLed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bulwark-orphans-"));
    const holder = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "test/harness/hold-control-plane.ts"), dir, cluster.binDir],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const output = collectOutput(holder);
    try {
      const { pids } = await waitUntil(
        "the control plane to start",
        async () => {
          const line = output()
            .split("\n")
            .find(l => l.startsWith('{"pids"'));
          return line ? (JSON.parse(line) as { pids: number[] }) : undefined;
        },
        120_000,
      );
      assert.equal(pids.length, 2);
      assert.ok(pids.every(running), "etcd and kube-apiserver run");
      holder.kill("SIGKILL");
      await waitUntil(
        "the children to die with their parent",
        async () => pids.every(pid => !running(pid)),
        10_000,
      );
    } finally {
      holder.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`npm start` prints 'Bulwark is ready', writes its kubeconfig, and SIGINT leaves no process behind", async () => {
    const { stack, output, ports, stateDir } = await startStack({});
    try {
      await waitUntil("Bulwark is ready", async () => output().includes(READY), 180_000, 500);
      const kubeconfig = JSON.parse(readFileSync(join(stateDir, "kubeconfig"), "utf8"));
      assert.match(kubeconfig.clusters[0].cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
      const started = descendants(stack.pid!);
      // etcd, kube-apiserver, kube-controller-manager, the Pepr module, the permission server,
      // the gateway and the edge-health daemon, each under setpriv's exec.
      assert.ok(started.length >= 7, `expected at least 7 child processes, saw ${started.length}`);
      const admin = `http://127.0.0.1:${ports.BULWARK_ADMIN_PORT}`;
      assert.equal((await fetch(`${admin}/readyz`)).status, 200, "the gateway is ready");
      const permission = `http://127.0.0.1:${ports.BULWARK_PERMISSION_PORT}/healthz`;
      assert.equal((await fetch(permission)).status, 200, "the permission server answers");
      assert.match(
        output(),
        /edge zone +demo: bulwark-edge-1 http:\/\/127\.0\.0\.2:\d+\/localinfo/,
      );
      assert.doesNotMatch(output(), /guard +enforcing/);

      const exited = new Promise<number | null>(resolve => stack.once("exit", resolve));
      stack.kill("SIGINT");
      assert.equal(await exited, 0, output());
      assert.deepEqual(started.filter(running), [], "every process it started has stopped");
      assert.match(output(), /SIGINT: stopping[\s\S]*stopped/);
    } finally {
      stack.kill("SIGKILL");
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it("with the guard enforcing, `npm start` comes up, says how to publish, and serves once published", async () => {
    const { stack, output, ports, stateDir } = await startStack({
      BULWARK_INGRESS_CHECKSUM: "enforce",
    });
    const backend = await startBackend("attested");
    try {
      await waitUntil("Bulwark is ready", async () => output().includes(READY), 180_000, 500);
      assert.match(output(), /guard +enforcing \(BULWARK_INGRESS_CHECKSUM=enforce\)/);
      const command = /\.\/bin\/bulwark\.js checksum publish --kind ingress -n bulwark-system/;
      assert.match(output(), command);
      const admin = `http://127.0.0.1:${ports.BULWARK_ADMIN_PORT}`;
      assert.equal((await fetch(`${admin}/readyz`)).status, 503, "nothing attested yet");

      const kubeconfigPath = join(stateDir, "kubeconfig");
      const host = "attested.example.com";
      await applyOrThrow(loadKubeConfig(kubeconfigPath), [
        endpointSlice("default", "attested", backend.port),
        ingress("default", "attested", { host, service: "attested" }),
      ]);
      // The command it printed, as a user would run it.
      const published = spawnSync(
        "./bin/bulwark.js",
        ["checksum", "publish", "--kind", "ingress", "-n", "bulwark-system"],
        { cwd: ROOT, env: { ...process.env, KUBECONFIG: kubeconfigPath }, encoding: "utf8" },
      );
      assert.equal(published.status, 0, published.stderr);
      const reply = await waitServed(Number(ports.BULWARK_HTTP_PORT), host, "attested");
      assert.equal(reply.status, 200);
      assert.equal((await fetch(`${admin}/readyz`)).status, 200);
      await waitUntil("the stack to say the gateway is ready", async () =>
        /bulwark-gateway-0 is ready: a published checksum matches/.test(output()),
      );
    } finally {
      // A stack that already exited (a port taken between freePort and its bind) sends no "exit"
      // again: waiting for one hung the test run.
      if (stack.exitCode === null && stack.signalCode === null) {
        const exited = new Promise(resolve => stack.once("exit", resolve));
        stack.kill("SIGINT");
        await exited;
      }
      await backend.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

const READY = "\nBulwark is ready\n";

/** `npm start` with its own state folder and free ports (a developer's own stack may be running). */
async function startStack(env: NodeJS.ProcessEnv) {
  const stateDir = mkdtempSync(join(tmpdir(), "bulwark-stack-"));
  const ports = {
    BULWARK_HTTP_PORT: String(await freePort()),
    BULWARK_HTTPS_PORT: String(await freePort()),
    BULWARK_ADMIN_PORT: String(await freePort()),
    BULWARK_PERMISSION_PORT: String(await freePort()),
    BULWARK_METRICS_PORT: String(await freePort()),
    BULWARK_EDGE_PORT: String(await freePort()),
  };
  const stack = spawn(process.execPath, ["--import", "tsx", join(ROOT, "hack/local-stack.ts")], {
    cwd: ROOT,
    // The module test/run.ts has built serves here too (a rebuild takes minutes on a busy machine).
    env: {
      ...process.env,
      BULWARK_STATE_DIR: stateDir,
      BULWARK_REUSE_MODULE_BUILD: "1",
      ...ports,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { stack, output: collectOutput(stack), ports, stateDir };
}
