import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Metafile } from "esbuild";
import { compile, ENTRIES, undeclaredPackages } from "./compile";

function metafile(imports: Metafile["outputs"][string]["imports"]): Metafile {
  return {
    inputs: {},
    outputs: { "build/x/main.js": { bytes: 1, inputs: {}, imports, exports: [] } },
  };
}

describe("undeclaredPackages", () => {
  it("names the packages a bundle requires that dependencies lack, by package", () => {
    const found = undeclaredPackages(
      metafile([
        { path: "node:fs", kind: "require-call", external: true },
        { path: "crypto", kind: "require-call", external: true },
        { path: "zod", kind: "require-call", external: true },
        { path: "js-yaml", kind: "require-call", external: true },
        { path: "@peculiar/asn1-x509/build/cjs", kind: "require-call", external: true },
        { path: "gateway/view.ts", kind: "import-statement", external: false },
        { path: "tsx", kind: "require-resolve", external: true },
      ]),
      { zod: "^4" },
    );
    assert.deepEqual(found, ["@peculiar/asn1-x509 (build/x/main.js)", "js-yaml (build/x/main.js)"]);
  });
});

describe("compile", () => {
  const out = mkdtempSync(join(tmpdir(), "bulwark-compile-"));
  after(() => rmSync(out, { recursive: true, force: true }));

  it("writes one bundle per program, each requiring only declared packages, and each loads", async () => {
    await compile(out);
    for (const entry of ENTRIES) {
      const bundle = join(out, entry.replace(/\.ts$/, ".js"));
      assert.ok(existsSync(bundle), bundle);
      assert.ok(existsSync(`${bundle}.map`), `${bundle}.map`);
    }
    // Loading a program's bundle runs nothing (bin/bulwark.js calls main); it exports main.
    const loaded = execFileSync(
      process.execPath,
      [
        "-e",
        `for (const f of ${JSON.stringify(["gateway", "permission-server", "init", "edge-health-daemon"].map(p => join(out, p, "main.js")))}) if (typeof require(f).main !== "function") throw new Error(f);
         if (typeof require(${JSON.stringify(join(out, "cli", "main.js"))}).run !== "function") throw new Error("cli");
         console.log("loaded")`,
      ],
      // The bundles sit in a temp folder: their packages come from the checkout's node_modules.
      {
        encoding: "utf8",
        env: { ...process.env, NODE_PATH: join(__dirname, "..", "node_modules") },
      },
    );
    assert.equal(loaded.trim(), "loaded");
  });
});
