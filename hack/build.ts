// `npm run build`: builds the Pepr module and writes everything a user applies into manifests/.
// manifests/ is generated: each `pepr build` makes a new webhook CA and API path, so the output
// is not committed (it would carry a private key) and never edited by hand.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { dump } from "js-yaml";
import { readYamlObjects } from "./control-plane/kube";
import { splitFailOpenRules } from "./webhook-policy";

export const ROOT = resolve(__dirname, "..");
export const MANIFESTS = join(ROOT, "manifests");
const DIST = join(ROOT, "dist");
const CRD_DIR = join(ROOT, "crds");

/** The CRD files in crds/, in apply order. */
export function crdFiles(): string[] {
  return readdirSync(CRD_DIR)
    .filter(f => f.endsWith(".yaml"))
    .sort()
    .map(f => join(CRD_DIR, f));
}

export function buildModule(options: { quiet?: boolean } = {}): void {
  execFileSync(
    process.execPath,
    [
      join(ROOT, "node_modules/pepr/dist/cli.js"),
      "build",
      "--rbac-mode",
      "scoped",
      "--output",
      DIST,
    ],
    { cwd: ROOT, stdio: options.quiet ? ["ignore", "ignore", "inherit"] : "inherit" },
  );
}

/** Writes manifests/: CRDs first (numbered so `kubectl apply -f manifests/` orders them), then the module. */
export function writeManifests(): string[] {
  for (const entry of readdirSync(MANIFESTS)) {
    if (entry !== "README.md") rmSync(join(MANIFESTS, entry), { recursive: true, force: true });
  }
  mkdirSync(MANIFESTS, { recursive: true });
  const written: string[] = [];
  const crds = crdFiles();
  if (crds.length > 0) {
    const path = join(MANIFESTS, "00-crds.yaml");
    if (crds.flatMap(readYamlObjects).some(o => o.kind !== "CustomResourceDefinition")) {
      throw new Error("crds/ may hold only CustomResourceDefinitions");
    }
    const parts = crds.map(
      f => `# from crds/${basename(f)}\n` + readFileSync(f, "utf8").trimEnd() + "\n",
    );
    writeFileSync(path, parts.join("---\n"));
    written.push(path);
  }
  const module = join(MANIFESTS, "10-pepr-module.yaml");
  const objects = readYamlObjects(join(DIST, "pepr-module-bulwark.yaml")).map(splitFailOpenRules);
  writeFileSync(module, objects.map(o => dump(o, { lineWidth: -1, noRefs: true })).join("---\n"));
  written.push(module);
  return written;
}

if (require.main === module) {
  buildModule();
  for (const path of writeManifests()) console.log(`wrote ${path}`);
}
