// `pepr build` also writes a Helm chart for the module (dist/bulwark-chart). Its values carry the
// controllers' env as lists (admission.env, watcher.env); this gives them the same settings as
// manifests/10-pepr-module.yaml, so either way of installing injects the same init image. It is
// renamed bulwark-module and versioned as the package: Pepr names it after the module (bulwark,
// the same name as the workloads' chart) with its scaffold's appVersion, 1.16.0.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import type { KubernetesObject, V1EnvVar } from "@kubernetes/client-node";
import { readYamlObjects, toYaml, toYamlDocuments } from "../../hack/control-plane/kube";
import { admissionPolicies, applyWebhookPolicy } from "../webhook-policy";
import {
  admissionDisruptionBudget,
  isAdmissionController,
  moduleEnv,
  withEnv,
} from "./pepr-module";
import type { BulwarkValues } from "./values";
import packageJson from "../../package.json";

export const MODULE_CHART_NAME = "bulwark-module";

type ChartValues = Record<string, unknown> & {
  admission?: { env?: V1EnvVar[] };
  watcher?: { env?: V1EnvVar[] };
};

/** Pepr's chart values with Bulwark's settings added to both controllers' env. */
export function configuredChartValues(chart: ChartValues, values: BulwarkValues): ChartValues {
  const env = moduleEnv(values);
  const next = structuredClone(chart);
  for (const controller of [next.admission, next.watcher]) {
    if (controller) controller.env = withEnv(env, controller.env);
  }
  return next;
}

/**
 * Pepr 1.1.4 writes the module's description into Chart.yaml unquoted; ours has a colon, which
 * makes the file invalid YAML ("mapping values are not allowed"). Quotes it; valid input stays.
 */
export function repairChartYaml(text: string): string {
  return text.replace(/^description: (.*)$/m, (line, value: string) => {
    try {
      if (typeof load(line) === "object") return line;
    } catch {
      // not valid YAML: quoted below
    }
    return `description: ${JSON.stringify(value)}`;
  });
}

/**
 * Chart.yaml named bulwark-module with the package's version as version and appVersion, its
 * comments kept; a key Pepr did not write is added.
 */
export function moduleChartYaml(text: string, version: string = packageJson.version): string {
  const settings: [string, string][] = [
    ["name", MODULE_CHART_NAME],
    ["version", version],
    ["appVersion", JSON.stringify(version)],
  ];
  let next = repairChartYaml(text);
  for (const [key, value] of settings) {
    const line = new RegExp(`^${key}:.*$`, "m");
    next = line.test(next)
      ? next.replace(line, `${key}: ${value}`)
      : `${next.trimEnd()}\n${key}: ${value}\n`;
  }
  return next;
}

interface JsonSchema {
  $ref?: string;
  definitions?: Record<string, { properties?: Record<string, unknown> }>;
  properties?: Record<string, unknown>;
}

/**
 * Pepr's values.schema.json with `global` allowed: its top level refuses unknown keys, and Helm
 * gives a subchart its parent's global values, so the module could not be a subchart.
 */
export function moduleChartSchema(schema: JsonSchema): JsonSchema {
  const next = structuredClone(schema);
  const ref = next.$ref?.match(/^#\/definitions\/(.+)$/)?.[1];
  const top = ref ? next.definitions?.[ref] : next;
  if (top) {
    top.properties = {
      ...top.properties,
      global: { type: "object", description: "Helm's global values, when a subchart; unread." },
    };
  }
  return next;
}

const WEBHOOK_TEMPLATES: Record<string, string> = {
  MutatingWebhookConfiguration: "mutation-webhook.yaml",
  ValidatingWebhookConfiguration: "validation-webhook.yaml",
};

/**
 * The chart's webhook templates, replaced by the build's own webhook configurations (from the same
 * `pepr build`: same CA bundle and API path) after packaging/webhook-policy.ts moved node and endpoint
 * rules to a webhook that fails open. Pepr's templates give every rule one failurePolicy.
 */
export function webhookTemplates(
  moduleObjects: readonly KubernetesObject[],
): Record<string, string> {
  const templates: Record<string, string> = {};
  for (const object of moduleObjects) {
    const file = WEBHOOK_TEMPLATES[object.kind ?? ""];
    if (!file) continue;
    const text = toYaml(applyWebhookPolicy(object));
    // Static YAML: braces in it (none today) would be Go template syntax to Helm.
    if (text.includes("{{"))
      throw new Error(`${object.kind} holds "{{", which Helm would template`);
    templates[file] =
      `# Written by npm run build from the module's manifest (fail-open split).\n${text}`;
  }
  templates["admission-policies.yaml"] =
    `# Written by npm run build: what the webhooks leave to the API server itself.\n${toYamlDocuments(admissionPolicies())}`;
  return templates;
}

/**
 * Pepr's chart folder (dist/bulwark-chart), made installable and named bulwark-module
 * (Chart.yaml), told Bulwark's settings (values.yaml), able to be a subchart (values.schema.json),
 * and given the fail-open webhook split from the module manifest next to it.
 */
export function configureModuleChart(
  dir: string,
  values: BulwarkValues,
  moduleManifest: string,
): void {
  const chartYaml = join(dir, "Chart.yaml");
  writeFileSync(chartYaml, moduleChartYaml(readFileSync(chartYaml, "utf8")));
  const schemaFile = join(dir, "values.schema.json");
  const schema = JSON.parse(readFileSync(schemaFile, "utf8")) as JsonSchema;
  writeFileSync(schemaFile, `${JSON.stringify(moduleChartSchema(schema), null, 2)}\n`);
  const valuesYaml = join(dir, "values.yaml");
  const chart = load(readFileSync(valuesYaml, "utf8")) as ChartValues;
  writeFileSync(valuesYaml, toYaml(configuredChartValues(chart, values)));
  const objects = readYamlObjects(moduleManifest);
  const templates = webhookTemplates(objects);
  const admission = objects.find(isAdmissionController);
  if (admission) {
    templates["admission-pdb.yaml"] =
      `# Written by npm run build: Pepr writes no PodDisruptionBudget.\n${toYaml(admissionDisruptionBudget(admission))}`;
  }
  for (const [file, text] of Object.entries(templates)) {
    writeFileSync(join(dir, "templates", file), text);
  }
}
