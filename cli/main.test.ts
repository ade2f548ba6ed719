import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import packageJson from "../package.json";
import { main } from "./main";
import type { ProgressStream } from "./progress";

async function run(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main(
    argv,
    s => (out += s),
    () => {},
  );
  return { code, out };
}

describe("bulwark help and version", () => {
  for (const argv of [["help"], ["--help"], ["-h"], []]) {
    it(`given ${JSON.stringify(argv)}, prints the usage and exits 0`, async () => {
      const { code, out } = await run(...argv);
      assert.equal(code, 0);
      assert.match(out, /^bulwark .*\n\nUsage:/);
    });
  }
  for (const argv of [["version"], ["--version"]]) {
    it(`given ${JSON.stringify(argv)}, prints the version and exits 0`, async () => {
      assert.deepEqual(await run(...argv), { code: 0, out: `${packageJson.version}\n` });
    });
  }
  const sections: [string[], RegExp, RegExp][] = [
    [
      ["checksum", "--help"],
      /bulwark checksum compute[\s\S]*bulwark checksum publish[\s\S]*keygen/,
      /permission reset/,
    ],
    [
      ["checksum", "publish", "--help"],
      /bulwark checksum publish/,
      /checksum compute|bulwark uninstall/,
    ],
    [["permission", "reset", "-h"], /bulwark permission reset POD/, /permission tls|checksum/],
    [["uninstall", "--help"], /bulwark uninstall \[--dry-run\]/, /checksum|permission reset/],
    [
      ["install", "secrets", "--help"],
      /bulwark install secrets \[-n bulwark-system\] \[--release bulwark\]/,
      /checksum|permission reset|uninstall \[/,
    ],
  ];
  for (const [argv, shows, hides] of sections) {
    it(`given ${JSON.stringify(argv)}, prints that command's usage alone and exits 0`, async () => {
      const { code, out } = await run(...argv);
      assert.equal(code, 0);
      assert.match(out, /^Usage:/);
      assert.match(out, shows);
      assert.doesNotMatch(out, hides);
      assert.match(out, /Exit codes/);
    });
  }
  it("given an unknown command, refuses it naming the command", async () => {
    await assert.rejects(run("versions"), /unknown command "versions"/);
    await assert.rejects(run("install", "certs"), /unknown command "install certs"/);
  });
  it("refuses a release or prefix that cannot start a name, before any cluster is chosen", async () => {
    await assert.rejects(run("install", "secrets", "--release", "Edge_1"), {
      name: "Error",
      message: '--release must be a DNS label (a-z, 0-9, -), got "Edge_1"',
    });
    await assert.rejects(
      run("install", "secrets", "--prefix", "x."),
      /--prefix must be a DNS label/,
    );
    await assert.rejects(run("install", "secrets", "extra"), /unexpected argument "extra"/);
  });
});

describe("progress: on a terminal only", () => {
  const ERASE = "\r\x1b[2K";
  const dir = mkdtempSync(join(tmpdir(), "bulwark-progress-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const FILES = 300;
  for (let i = 0; i < FILES; i++) {
    writeFileSync(
      join(dir, `ingress-${String(i).padStart(3, "0")}.yaml`),
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web-${i}, namespace: shop}\n` +
        `spec: {ingressClassName: bulwark, rules: [{host: web-${i}.shop.test}]}\n`,
    );
  }
  writeFileSync(
    join(dir, "settings.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: shop}\n",
  );
  const argv = ["checksum", "compute", "--kind", "ingress", "-f", dir];

  async function compute(terminal?: ProgressStream) {
    let out = "";
    let err = "";
    const code = await main(
      argv,
      s => void (out += s),
      s => void (err += s),
      terminal,
    );
    return { code, out, err };
  }

  function stream(isTTY: boolean) {
    const written: string[] = [];
    return {
      written,
      stream: { isTTY, write: (s: string | Uint8Array) => (written.push(String(s)), true) },
    };
  }

  it("piped: nothing is written to the stream, and the output is what it is without one", async () => {
    const piped = stream(false);
    const withStream = await compute(piped.stream);
    assert.deepEqual(piped.written, []);
    assert.deepEqual(withStream, await compute());
    assert.equal(withStream.code, 0);
    assert.match(withStream.err, /^ignored ConfigMap shop\/s \(.*settings\.yaml\): not an Ingress/);
  });

  it("on a TTY: 'reading N/301 files…' rewritten in place, erased before the output", async () => {
    const tty = stream(true);
    const result = await compute(tty.stream);
    assert.deepEqual(result, await compute());
    assert.equal(tty.written[0], `${ERASE}reading 1/${FILES + 1} files…`);
    assert.equal(tty.written.at(-1), ERASE);
    for (const line of tty.written) {
      assert.match(line, new RegExp(`^\\r\\x1b\\[2K(reading \\d+/${FILES + 1} files…)?$`));
    }
  });

  it("as a process: piped output is byte for byte the in-process output; on a pty the progress shows", async () => {
    const expected = await compute();
    const bin = join(__dirname, "..", "bin", "bulwark.js");
    const piped = spawnSync(process.execPath, [bin, ...argv], { encoding: "utf8" });
    assert.deepEqual([piped.status, piped.stdout, piped.stderr], [0, expected.out, expected.err]);
    // script(1) gives the process a real terminal; its stdout goes to /dev/null.
    const command = [process.execPath, bin, ...argv].map(a => `'${a}'`).join(" ");
    const pty = spawnSync("script", ["-qec", `${command} >/dev/null`, "/dev/null"], {
      encoding: "utf8",
    });
    assert.equal(pty.status, 0, pty.stderr);
    assert.ok(
      pty.stdout.startsWith(`${ERASE}reading 1/${FILES + 1} files…`),
      JSON.stringify(pty.stdout.slice(0, 80)),
    );
    assert.match(pty.stdout, new RegExp(`\\r\\x1b\\[2Kignored ConfigMap shop/s`));
  });
});
