import { describe, it } from "node:test";
import assert from "node:assert/strict";
import packageJson from "../package.json";
import { main } from "./main";

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
