// `npm run compile`, and `npm pack` through its prepack script: the JavaScript the image runs, in
// build/ (dist/ is Pepr's). One esbuild bundle per program, CommonJS for the image's Node: our
// TypeScript is bundled, every package stays a require() of node_modules, so the image installs
// the production dependencies and loads ~one file of ours per program instead of compiling
// ~200 TypeScript files through tsx at every start. The bundles keep the source tree's layout
// (build/gateway/main.js, build/gateway/data-plane-worker.js, ...): the gateway starts its
// node:cluster workers from the file next to its own. esbuild does not type-check; `npm run build`
// (pepr build runs tsc over the whole project) and `npm run typecheck` do.
import { build, type Metafile } from "esbuild";
import { builtinModules } from "node:module";
import { readFileSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(__dirname, "..");
export const BUILD_DIR = join(ROOT, "build");

/** Each program bin/bulwark.js runs, the gateway's data-plane worker and its password-check thread. */
export const ENTRIES = [
  "gateway/main.ts",
  "gateway/data-plane-worker.ts",
  "gateway/policy/password-worker.ts",
  "permission-server/main.ts",
  "init/main.ts",
  "edge-health-daemon/main.ts",
  "cli/main.ts",
] as const;

const BUILTINS = new Set(builtinModules);

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/**
 * The packages the bundles require that package.json's dependencies do not declare: the image
 * installs only those, so each would fail at run time. A require.resolve is left out: the
 * gateway resolves tsx only when it runs from TypeScript sources, never from a bundle.
 */
export function undeclaredPackages(
  metafile: Metafile,
  dependencies: Record<string, string>,
): string[] {
  const missing = new Set<string>();
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    for (const { path, kind, external } of imports) {
      if (!external || kind === "require-resolve") continue;
      if (path.startsWith("node:") || BUILTINS.has(path)) continue;
      const name = packageName(path);
      if (!Object.hasOwn(dependencies, name)) missing.add(`${name} (${output})`);
    }
  }
  return [...missing].sort();
}

/** Writes build/ afresh; fails on a build error or an undeclared package. */
export async function compile(outdir: string = BUILD_DIR): Promise<Metafile> {
  rmSync(outdir, { recursive: true, force: true });
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES.map(e => join(ROOT, e)),
    outbase: ROOT,
    outdir,
    bundle: true,
    platform: "node",
    format: "cjs",
    // package.json "engines"; the image runs the Dockerfile's NODE_VERSION.
    target: "node20",
    packages: "external",
    // Class and function names as in the sources: error names, logs, stack traces.
    keepNames: true,
    // Not loaded unless asked (NODE_OPTIONS=--enable-source-maps): stack traces then name the
    // TypeScript file and line (paths only; the sources are in the repository).
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    logLevel: "warning",
  });
  const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const missing = undeclaredPackages(metafile, packageJson.dependencies ?? {});
  if (missing.length > 0) {
    throw new Error(`not in package.json dependencies: ${missing.join(", ")}`);
  }
  return metafile;
}

if (require.main === module) {
  compile().then(
    metafile => {
      // On stderr: `npm pack --json` runs this (prepack) and its stdout must stay JSON.
      for (const [file, { bytes }] of Object.entries(metafile.outputs)) {
        if (!file.endsWith(".js")) continue;
        const size = `${Math.round(bytes / 1024)} KiB`;
        process.stderr.write(`compiled ${relative(ROOT, resolve(ROOT, file))} (${size})\n`);
      }
    },
    (error: unknown) => {
      console.error(`compile: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
