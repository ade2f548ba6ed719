// Each entrypoint exactly as the image runs it, built as the Dockerfile builds the image: the
// package as `npm pack` makes it (its prepack compiles build/, package.json "files" ships bin/ and
// build/ only), laid over the production dependencies `npm ci --omit=dev` installs from the
// lockfile, started through bin/bulwark.js with the program as the first argument, on the image's
// Node.js (the Dockerfile's NODE_VERSION, fetched once by hack/node-runtime). So what runs is the
// compiled JavaScript with no tsx and no dev dependency. No Docker engine exists here, so this
// stands in for building the image. (It needs the npm registry; the control plane only for the
// gateway that serves.)
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { promisify } from "node:util";
import { ROOT } from "../../../packaging/build";
import { ENTRIES as COMPILED_ENTRIES } from "../../../packaging/compile";
import { imageNode } from "../../../hack/node-runtime/runtime";
import { startProcess } from "../../../hack/control-plane/processes";
import packageJson from "../../../package.json";
import { testCluster, testNamespace } from "../../harness/cluster";
import { ensureIngressClass } from "../gateway/harness";
import { waitUntil } from "../../harness/wait";

const exec = promisify(execFile);
const VERSION = packageJson.version;

interface Entry {
  entry: string;
  /** The setting a bare environment lacks, which the program must name. */
  missing: string;
  env?: NodeJS.ProcessEnv;
}

// The permission server has a default for every setting; a bad one stands in for a missing one.
const ENTRIES: Entry[] = [
  { entry: "gateway", missing: "BULWARK_POD_NAME" },
  {
    entry: "permission-server",
    missing: "BULWARK_PERMISSION_PORT",
    env: { BULWARK_PERMISSION_PORT: "http" },
  },
  { entry: "init", missing: "POD_NAME" },
  { entry: "edge-health", missing: "BULWARK_NODE_NAME" },
];

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

describe("the image's entrypoints, from `npm pack` with production dependencies only", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-entrypoints-"));
  /** The image's /app. */
  const app = join(dir, "app");
  const bin = join(app, "bin", "bulwark.js");
  let node = "";
  let packedFiles: string[] = [];

  /** Runs `bulwark ARGS` as the image does, with a bare environment (no KUBECONFIG, no BULWARK_*). */
  async function bulwark(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
    const bare = { PATH: process.env.PATH, HOME: dir, TMPDIR: join(dir, "tmp"), ...env };
    try {
      const { stdout, stderr } = await exec(node, [bin, ...args], {
        cwd: app,
        env: bare,
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof failed.code !== "number") throw error;
      return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  }

  before(async () => {
    node = imageNode();
    // The Dockerfile's build stage: `npm pack` (prepack compiles build/; its log is on stderr).
    const packed = await exec("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: ROOT,
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [pack] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(pack, "npm pack made a tarball");
    packedFiles = pack.files.map(f => f.path);
    // Its runtime stage: production dependencies from the lockfile, then the packed files over them.
    mkdirSync(app);
    for (const file of ["package.json", "package-lock.json"])
      copyFileSync(join(ROOT, file), join(app, file));
    await exec("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: app,
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    await exec("tar", ["-xzf", join(dir, pack.filename), "--strip-components=1", "-C", app]);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs on the Node.js release the Dockerfile names", async () => {
    const pinned = /^ARG NODE_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    assert.ok(pinned, "the Dockerfile has an ARG NODE_VERSION line");
    const { stdout } = await exec(node, ["--version"]);
    assert.equal(stdout.trim(), `v${pinned[1]}`);
  });

  it("ships bin/bulwark.js and the compiled bundles, no TypeScript; installs no dev dependencies", () => {
    for (const entry of COMPILED_ENTRIES) {
      const bundle = join("build", entry.replace(/\.ts$/, ".js"));
      assert.ok(packedFiles.includes(bundle), `${bundle} is in the package`);
      assert.ok(existsSync(join(app, bundle)), `${bundle} is installed`);
    }
    const unexpected = packedFiles.filter(
      f => !/^build\/.+\.js(\.map)?$/.test(f) && !["bin/bulwark.js", "package.json"].includes(f),
    );
    assert.deepEqual(
      unexpected.filter(f => !["LICENSE", "README.md"].includes(f)),
      [],
      "nothing but bin/, build/ and npm's own files",
    );
    // tsx and typescript among them: nothing in the image compiles TypeScript at run time. Pepr
    // builds the module (its controller runs Pepr's own image); none of the image's programs
    // imports it.
    for (const dev of [
      "fastify",
      "@fastify/http-proxy",
      "@types/express",
      "tsx",
      "typescript",
      "pepr",
      "eslint",
      "prettier",
    ]) {
      assert.ok(!existsSync(join(app, "node_modules", dev)), `${dev} is a dev dependency`);
    }
  });

  for (const { entry, missing, env } of ENTRIES) {
    it(`bulwark ${entry} --help and --version answer with the package's version`, async () => {
      const help = await bulwark([entry, "--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /bulwark/i);
      assert.ok(help.stdout.split("\n").length > 2, "more than a line of help");
      const version = await bulwark([entry, "--version"]);
      assert.equal(version.code, 0, version.stderr);
      assert.ok(version.stdout.includes(VERSION), version.stdout);
    });

    it(`bulwark ${entry} without ${missing} exits 2 with one line naming it`, async () => {
      const outcome = await bulwark([entry], env);
      assert.equal(outcome.code, 2, `${outcome.stdout}${outcome.stderr}`);
      const lines = outcome.stderr.trim().split("\n");
      assert.equal(lines.length, 1, outcome.stderr);
      assert.ok(lines[0]?.includes(missing), lines[0]);
      assert.match(lines[0] ?? "", /^bulwark-/, "the program names itself");
    });
  }

  it("bulwark cli … and plain bulwark … run the CLI", async () => {
    const version = await bulwark(["--version"]);
    assert.equal(version.stdout.trim(), VERSION);
    const help = await bulwark(["cli", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /bulwark uninstall \[--dry-run\]/);
    assert.match(help.stdout, /bulwark gateway\|permission-server\|init\|edge-health/);
    const usage = await bulwark(["checksum", "compute"]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--kind is required/);
    const unknown = await bulwark(["frobnicate"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });

  it("runs with a read-only root file system (the injected init container has no /tmp)", async () => {
    // A temp dir that cannot be created, as on a read-only root with no /tmp volume: the compiled
    // programs write no temp files (no compile cache, no openssl scratch folder).
    for (const entry of ENTRIES) {
      const outcome = await bulwark([entry.entry, "--version"], { TMPDIR: "/dev/null/tmp" });
      assert.equal(outcome.code, 0, outcome.stderr);
      assert.ok(outcome.stdout.includes(VERSION));
    }
  });

  it("bulwark gateway serves from the bundles: ready, two data-plane workers, its own default certificate", async t => {
    const cluster = testCluster();
    // Ready needs a good view, which needs the IngressClass it serves.
    await ensureIngressClass(cluster.kc);
    const [namespace, removeNamespace] = await testNamespace(cluster, "entrypoint-gateway");
    const stateDir = join(dir, "gateway-state");
    mkdirSync(stateDir);
    const spawned = performance.now();
    const gateway = startProcess("bulwark-gateway-0", node, [bin, "gateway"], {
      cwd: app,
      logFile: join(dir, "gateway.log"),
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        // No writable temp folder, as with a read-only root and no /tmp volume.
        TMPDIR: "/dev/null/tmp",
        KUBECONFIG: cluster.kubeconfigPath,
        BULWARK_POD_NAME: "bulwark-gateway-0",
        BULWARK_STATE_DIR: stateDir,
        BULWARK_WATCH_NAMESPACES: namespace,
        BULWARK_LISTEN_HOST: "127.0.0.1",
        BULWARK_HTTP_PORT: "0",
        BULWARK_HTTPS_PORT: "0",
        BULWARK_ADMIN_PORT: "0",
        // node:cluster workers run build/gateway/data-plane-worker.js, next to the gateway's bundle.
        BULWARK_WORKERS: "2",
        BULWARK_DRAIN_SECONDS: "1",
        LOG_LEVEL: "info",
      },
    });
    let exited: number | string | undefined;
    void gateway.exited.then(code => (exited = code));
    try {
      const running = (): string => {
        const log = existsSync(gateway.logFile) ? readFileSync(gateway.logFile, "utf8") : "";
        if (exited !== undefined)
          throw new Error(`gateway exited (${exited}):\n${log.slice(-2000)}`);
        return log;
      };
      const ports = await waitUntil("the gateway's started line", () => {
        const line = running()
          .split("\n")
          .find(l => l.includes('"gateway started"'));
        return line ? (JSON.parse(line) as { httpsPort: number; adminPort: number }) : undefined;
      });
      const admin = `http://127.0.0.1:${ports.adminPort}`;
      await waitUntil(
        "the gateway's /readyz",
        async () => running() && (await fetch(`${admin}/readyz`)).status === 200,
        60_000,
      ).catch(async (error: Error) => {
        const health = await fetch(`${admin}/healthz`).then(r => r.text(), String);
        throw new Error(`${error.message}\n/healthz: ${health}\n${running().slice(-3000)}`);
      });
      t.diagnostic(`ready ${Math.round(performance.now() - spawned)} ms after spawn`);
      const socket = connect({
        host: "127.0.0.1",
        port: ports.httpsPort,
        servername: "unknown.test",
        rejectUnauthorized: false,
      });
      await once(socket, "secureConnect");
      const served = socket.getPeerX509Certificate();
      socket.destroy();
      assert.equal(served?.subject, "CN=bulwark-gateway-default");
    } finally {
      await gateway.stop(10_000);
      await removeNamespace();
    }
  });
});
