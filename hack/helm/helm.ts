// helm, built from its Go module on first use (hack/helm/build.sh caches it under
// ~/.cache/bulwark/tools), and `helm template` of a chart with values given as an object.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { toYaml } from "../control-plane/kube";

const BUILD_SCRIPT = resolve(__dirname, "build.sh");

let cached: string | undefined;

/** The helm binary's path; builds it (minutes, once per machine) when missing. */
export function helmBinary(): string {
  cached ??= execFileSync("bash", [BUILD_SCRIPT], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return cached;
}

export function helm(args: string[]): string {
  return execFileSync(helmBinary(), args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** `helm template RELEASE CHART -n NAMESPACE -f <values>`, as objects. */
export function renderChart(
  chart: string,
  options: { release: string; namespace: string; values: object },
): KubernetesObject[] {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-helm-"));
  try {
    const valuesFile = join(dir, "values.yaml");
    writeFileSync(valuesFile, toYaml(options.values));
    const out = helm([
      "template",
      options.release,
      chart,
      "-n",
      options.namespace,
      "-f",
      valuesFile,
    ]);
    return loadAll(out).filter(
      (doc): doc is KubernetesObject => typeof doc === "object" && doc !== null && "kind" in doc,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
