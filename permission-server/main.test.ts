import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { main as serverMain } from "./main";
import { main as initMain } from "../init/main";

/** Runs `run` with `env` set and stdout/stderr captured. */
async function captured(env: Record<string, string>, run: () => Promise<number>) {
  const saved = { ...process.env };
  const out: string[] = [];
  const write = { out: process.stdout.write, err: process.stderr.write };
  Object.assign(process.env, env);
  process.stdout.write = ((s: string) => (out.push(s), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => (out.push(s), true)) as typeof process.stderr.write;
  try {
    return { code: await run(), text: out.join("") };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
    process.env = saved;
  }
}

describe("bulwark-permission-server and bulwark-init entry points", () => {
  it("print --version and --help and return 0", async () => {
    for (const main of [serverMain, initMain]) {
      const version = await captured({}, () => main(["--version"]));
      assert.deepEqual([version.code, version.text], [0, "0.1.0\n"]);
      const help = await captured({}, () => main(["--help"]));
      assert.equal(help.code, 0);
      assert.match(help.text, /BULWARK_PERMISSION_(PORT|SERVER)/);
    }
  });

  it("given a bad setting, print one line naming it and return 2", async () => {
    const server = await captured({ BULWARK_BREAKER_THRESHOLD: "zero" }, () => serverMain([]));
    assert.deepEqual(
      [server.code, server.text],
      [
        2,
        'bulwark-permission-server: BULWARK_BREAKER_THRESHOLD must be an integer from 1 to 100; got "zero"\n',
      ],
    );
    const init = await captured({ POD_NAME: "", POD_NAMESPACE: "" }, () => initMain([]));
    assert.deepEqual(
      [init.code, init.text],
      [2, "bulwark-init: POD_NAME is required (the pod name, from the Downward API)\n"],
    );
  });
});
