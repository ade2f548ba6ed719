// Each entrypoint exactly as the image runs it: the package as `npm pack` makes it (package.json
// "files"), installed with production dependencies only into a fresh folder, started through
// bin/bulwark.js with the program as the first argument and an environment that has none of
// Bulwark's settings, on the image's Node.js (the Dockerfile's NODE_VERSION, fetched once by
// hack/node-runtime). No Docker engine exists here, so this stands in for building the image.
// (It needs the npm registry, not the control plane.)
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../../../packaging/build";
import { imageNode } from "../../../hack/node-runtime/runtime";
import packageJson from "../../../package.json";

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
  const installed = join(dir, "node_modules", "bulwark");
  const bin = join(installed, "bin", "bulwark.js");
  let node = "";

  /** Runs `bulwark ARGS` as the image does, with a bare environment (no KUBECONFIG, no BULWARK_*). */
  async function bulwark(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
    const bare = { PATH: process.env.PATH, HOME: dir, TMPDIR: join(dir, "tmp"), ...env };
    try {
      const { stdout, stderr } = await exec(node, [bin, ...args], {
        cwd: dir,
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
    const packed = await exec("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT });
    const [pack] = JSON.parse(packed.stdout) as { filename: string }[];
    assert.ok(pack, "npm pack made a tarball");
    const filename = pack.filename;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "image", private: true }));
    await exec(
      "npm",
      ["install", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", join(dir, filename)],
      { cwd: dir, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
    );
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs on the Node.js release the Dockerfile names", async () => {
    const pinned = /^ARG NODE_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    assert.ok(pinned, "the Dockerfile has an ARG NODE_VERSION line");
    const { stdout } = await exec(node, ["--version"]);
    assert.equal(stdout.trim(), `v${pinned[1]}`);
  });

  it("ships the runtime's sources and no tests; installs no dev dependencies", () => {
    for (const folder of [
      "bin",
      "cli",
      "core",
      "kube",
      ...ENTRIES.map(e => (e.entry === "edge-health" ? "edge-health-daemon" : e.entry)),
    ]) {
      assert.ok(existsSync(join(installed, folder)), `${folder}/ is in the package`);
    }
    const files = readdirSync(installed, { recursive: true }).map(String);
    assert.deepEqual(
      files.filter(f => f.endsWith(".test.ts")),
      [],
    );
    assert.ok(!files.some(f => f.startsWith("hack") || f.startsWith("test")), "no hack/ or test/");
    for (const dev of ["fastify", "@fastify/http-proxy", "@types/express"]) {
      assert.ok(!existsSync(join(dir, "node_modules", dev)), `${dev} is a dev dependency`);
    }
    assert.ok(existsSync(join(dir, "node_modules", "tsx")), "tsx runs the TypeScript");
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
    // A temp dir that cannot be created, as on a read-only root: tsx's cache is turned off.
    const outcome = await bulwark(["init", "--version"], { TMPDIR: "/dev/null/tmp" });
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.ok(outcome.stdout.includes(VERSION));
  });
});
