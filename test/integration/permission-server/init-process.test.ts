// bulwark-init run exactly as the container runs it: `node bin/bulwark.js init` (the image's
// entrypoint and CMD) with only the environment the pod-permission injection sets (the Downward
// API fields filled in as kubelet would) and the projected token in a file, against a real
// permission server over TLS and the real API server. It exits 0 when granted; 1 with one line on
// stderr when refused or when the pod's breaker is open; and it rides out a server that is down
// for a few seconds by retrying itself.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import { freePort } from "../../../hack/control-plane/ports";
import {
  createPki,
  issueLoopbackServingCertificate,
  type Pki,
} from "../../../hack/control-plane/pki";
import { bulwarkInitContainer, INIT_ENV, type InjectConfig } from "../../../core/permission";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import { processEnv } from "../../../packaging/testkit";
import type { RunningServer } from "../../../permission-server/server";
import {
  AUDIENCE,
  createGroup,
  createPod,
  deleteProvider,
  podToken,
  setPodIp,
  startAuthzProvider,
  startReplicas,
} from "./helpers";

const cluster = testCluster();
const ROOT = join(__dirname, "..", "..", "..");

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("bulwark-init as a process", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let provider: string;
  let dir: string;
  let pki: Pki;
  let port: number;
  let server: RunningServer | undefined;

  /** A server on the fixed port over TLS; the breaker opens at the first failed attempt. */
  async function startServer(): Promise<RunningServer> {
    const pair = issueLoopbackServingCertificate(pki, `server-${Date.now()}`);
    const [started] = await startReplicas(cluster, ns, 1, {
      BULWARK_PERMISSION_PORT: String(port),
      BULWARK_TLS_CERT_PATH: pair.certPath,
      BULWARK_TLS_KEY_PATH: pair.keyPath,
      BULWARK_BREAKER_THRESHOLD: "1",
    });
    return started as RunningServer;
  }

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-proc");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 300 }, 2));
    authz.deny({ resource: "ledger" }, "ledger: no such resource");
    await createGroup(cluster, ns, "ledger", {
      permissions: [
        { name: "ledger-read", provider, params: { resource: "ledger", action: "read" } },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), "bulwark-init-proc-"));
    mkdirSync(join(dir, "pki"));
    pki = createPki(join(dir, "pki"));
    port = await freePort();
    server = await startServer();
  });

  after(async () => {
    await server?.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The env the injection gives the init container for `pod` (the module's own builder, its
   * Downward API fields resolved), the token where the projected volume would hold it.
   */
  async function containerEnv(
    pod: V1Pod,
    group: string,
    token: string,
  ): Promise<NodeJS.ProcessEnv> {
    const config: InjectConfig = {
      image: "unused",
      serverUrl: `https://127.0.0.1:${port}`,
      audience: AUDIENCE,
      tokenExpirationSeconds: 3600,
      ownNamespace: "bulwark-system",
      caBundle: pki.caPem,
    };
    const container = bulwarkInitContainer(group, "bulwark-token", config);
    const env = processEnv(container.env, {
      "metadata.name": pod.metadata?.name ?? "",
      "metadata.namespace": pod.metadata?.namespace ?? "",
      "metadata.uid": pod.metadata?.uid ?? "",
      "status.podIP": pod.status?.podIP ?? "",
    });
    // The one difference from the container: the projected volume's mount path is not ours to
    // write, so the token file lives in the test's folder and BULWARK_TOKEN_PATH points at it.
    const tokenPath = join(dir, `${pod.metadata?.name}.token`);
    writeFileSync(tokenPath, token);
    return { ...env, [INIT_ENV.tokenPath]: tokenPath };
  }

  /** `onStdout` sees the output as it comes. */
  function runInitProcess(
    env: NodeJS.ProcessEnv,
    onStdout: (text: string) => void = () => {},
  ): Promise<Exit> {
    const child = spawn(process.execPath, [join(ROOT, "bin", "bulwark.js"), "init"], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      onStdout(stdout);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    return new Promise(resolve =>
      child.on("exit", code => {
        clearTimeout(killer);
        resolve({ code, stdout, stderr });
      }),
    );
  }

  async function startedPod(name: string, group: string, ip: string): Promise<V1Pod> {
    await createPod(cluster, ns, name, group);
    return setPodIp(cluster, ns, name, ip);
  }

  it("exits 0 once granted", async () => {
    const pod = await startedPod("granted", "readers", "127.0.7.1");
    const exit = await runInitProcess(
      await containerEnv(pod, "readers", await podToken(cluster, pod)),
    );
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /bulwark-init: granted\n$/);
    assert.equal(exit.stderr, "");
    assert.ok(authz.isGranted("127.0.7.1", "orders", "read"));
  });

  it("exits 1 with one line when the server refuses the caller (another pod's token)", async () => {
    const pod = await startedPod("impostor", "readers", "127.0.7.2");
    const other = await startedPod("victim", "readers", "127.0.7.3");
    const exit = await runInitProcess(
      await containerEnv(pod, "readers", await podToken(cluster, other)),
    );
    assert.equal(exit.code, 1);
    assert.match(exit.stderr, /^bulwark-init: refused: 403 [^\n]+\n$/);
    assert.equal(authz.isGranted("127.0.7.2", "orders", "read"), false);
  });

  it("exits 1 with one line when the pod's breaker opens (a permanently denied permission)", async () => {
    const pod = await startedPod("denied", "ledger", "127.0.7.4");
    const exit = await runInitProcess(
      await containerEnv(pod, "ledger", await podToken(cluster, pod)),
    );
    assert.equal(exit.code, 1);
    assert.match(
      exit.stderr,
      /^bulwark-init: [^\n]*breaker[^\n]*ledger: no such resource[^\n]*\n$/,
    );
  });

  it("retries a server that is down for a few seconds itself, then exits 0", async () => {
    const pod = await startedPod("patient", "readers", "127.0.7.5");
    const env = await containerEnv(pod, "readers", await podToken(cluster, pod));
    await server?.stop();
    server = undefined;
    let said = "";
    const exit = runInitProcess(env, stdout => (said = stdout));
    // Bring the server back only once the process has met it down.
    await waitUntil("the init process to retry the stopped server", async () =>
      /retrying: /.test(said),
    );
    server = await startServer();
    const result = await exit;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /retrying: [^\n]*\n/, "it said it was retrying");
    assert.match(result.stdout, /bulwark-init: granted\n$/);
  });
});
