// `npm run build`: builds the Pepr module and writes everything a user applies into manifests/.
// manifests/ is generated: each `pepr build` makes a new webhook CA and API path, so the output
// is not committed (it would carry a private key) and never edited by hand.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { load } from "js-yaml";
import { formatErrors } from "../core/result";
import { readYamlObjects, toYamlDocuments } from "../hack/control-plane/kube";
import { admissionPolicies, applyWebhookPolicy } from "./webhook-policy";
import {
  configureModule,
  defaultValues,
  DEFAULT_IMAGE,
  valuesFrom,
  workloadManifests,
  type BulwarkValues,
} from "./manifests";
import { configureModuleChart } from "./manifests/pepr-chart";

export const ROOT = resolve(__dirname, "..");
export const MANIFESTS = join(ROOT, "manifests");
const DIST = join(ROOT, "dist");
/** What `pepr build` writes: the module's manifest, and a Helm chart for it. */
export const MODULE_MANIFEST = join(DIST, "pepr-module-bulwark.yaml");
export const MODULE_CHART = join(DIST, "bulwark-chart");
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

/** `--name VALUE` or `--name=VALUE`; undefined when absent, an error when it has no value. */
function flag(args: string[], name: string, example: string): string | undefined {
  const at = args.findIndex(a => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return undefined;
  const value = args[at]?.includes("=") ? args[at]?.slice(name.length + 3) : args[at + 1];
  if (!value || value.startsWith("--"))
    throw new Error(`--${name} needs a value: --${name} ${example}`);
  return value;
}

/** The image the workloads run: `--image REGISTRY/bulwark:TAG`, else $BULWARK_IMAGE, else the release's. */
export function imageFromArgs(args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return flag(args, "image", "REGISTRY/bulwark:TAG") ?? (env.BULWARK_IMAGE || DEFAULT_IMAGE);
}

/**
 * The build's values: the defaults with the image, and `--values FILE` (the Helm chart's keys,
 * merged as Helm merges) over them, checked by the chart's own schema: a bad value or a key Helm
 * would refuse stops the build, naming its field. `--namespace NS` and `--release NAME` are
 * `helm install NAME -n NS` (defaults bulwark-system and bulwark).
 */
export function valuesFromArgs(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): BulwarkValues {
  const file = flag(args, "values", "my-values.yaml");
  const overrides = file === undefined ? {} : load(readFileSync(file, "utf8"));
  const values = valuesFrom(imageFromArgs(args, env), overrides, {
    namespace: flag(args, "namespace", "bulwark-system"),
    release: flag(args, "release", "bulwark"),
  });
  if (!values.ok) throw new Error(`${file ?? "values"}: ${formatErrors(values.errors)}`);
  return values.value;
}

/**
 * Writes manifests/: CRDs first (numbered so `kubectl apply -f manifests/` orders them), then the
 * module (its controllers told the workloads' image and addresses), then the workloads.
 */
export function writeManifests(
  values: BulwarkValues = defaultValues(),
  dir: string = MANIFESTS,
): string[] {
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(dir)) {
    if (entry !== "README.md") rmSync(join(dir, entry), { recursive: true, force: true });
  }
  const written: string[] = [];
  const crds = crdFiles();
  if (crds.length > 0) {
    const path = join(dir, "00-crds.yaml");
    if (crds.flatMap(readYamlObjects).some(o => o.kind !== "CustomResourceDefinition")) {
      throw new Error("crds/ may hold only CustomResourceDefinitions");
    }
    const parts = crds.map(
      f => `# from crds/${basename(f)}\n` + readFileSync(f, "utf8").trimEnd() + "\n",
    );
    writeFileSync(path, parts.join("---\n"));
    written.push(path);
  }
  const module = join(dir, "10-pepr-module.yaml");
  const policy = {
    ownNamespace: values.namespace,
    classlessIngresses: values.gateway.ingressClass.default,
  };
  const objects = readYamlObjects(MODULE_MANIFEST).map(o => applyWebhookPolicy(o, policy));
  writeFileSync(
    module,
    toYamlDocuments([...configureModule(objects, values), ...admissionPolicies(policy)]),
  );
  written.push(module);
  const workloads = join(dir, "20-bulwark.yaml");
  writeFileSync(workloads, toYamlDocuments(workloadManifests(values)));
  written.push(workloads);
  return written;
}

if (require.main === module) {
  const values = valuesFromArgs(process.argv.slice(2));
  buildModule();
  for (const path of writeManifests(values)) console.log(`wrote ${path}`);
  if (existsSync(join(MODULE_CHART, "Chart.yaml"))) {
    configureModuleChart(MODULE_CHART, values, MODULE_MANIFEST);
    console.log(`configured ${MODULE_CHART} (the module's Helm chart)`);
  }
  console.log(`workloads and init containers run ${values.image}`);
}
