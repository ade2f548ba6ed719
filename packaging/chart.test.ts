// The Helm chart (charts/bulwark) keeps the generators' values: same keys, same defaults, the
// package's version. Rendering it is test/integration/packaging/helm.test.ts (needs helm).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { ROOT } from "./build";
import { defaultChartValues, defaultValues, parseChartValues, parseValues } from "./manifests";
import {
  CHART_README,
  CHART_SCHEMA,
  chartSchemaText,
  chartValuesJsonSchema,
  readmeWithValues,
} from "./manifests/chart-schema";
import packageJson from "../package.json";

const CHART = join(ROOT, "charts", "bulwark");

describe("charts/bulwark", () => {
  it("values.yaml holds exactly the generators' defaults (namespace and release are Helm's)", () => {
    const chartValues = load(readFileSync(join(CHART, "values.yaml"), "utf8"));
    const { namespace, release, ...defaults } = defaultValues();
    assert.equal(namespace, "bulwark-system");
    assert.equal(release, "bulwark");
    assert.deepEqual(chartValues, defaults);
    assert.deepEqual(chartValues, defaultChartValues());
    assert.ok(parseChartValues(chartValues).ok);
    assert.ok(parseValues({ namespace, release, ...(chartValues as object) }).ok);
  });

  it("is versioned with the package, and its default image is the release's", () => {
    const chart = load(readFileSync(join(CHART, "Chart.yaml"), "utf8")) as Record<string, unknown>;
    assert.equal(chart.version, packageJson.version);
    assert.equal(chart.appVersion, packageJson.version);
    assert.equal(chart.name, "bulwark");
  });

  it("values.schema.json is the generators' zod schema (npx tsx packaging/manifests/chart-schema.ts)", () => {
    assert.deepEqual(JSON.parse(readFileSync(CHART_SCHEMA, "utf8")), JSON.parse(chartSchemaText()));
    const schema = chartValuesJsonSchema() as { properties: Record<string, unknown> };
    assert.ok(!("namespace" in schema.properties), "the namespace is the release's");
    assert.ok(!("release" in schema.properties), "the release name is Helm's");
  });

  it("README.md's values table is the schema's (npx tsx packaging/manifests/chart-schema.ts)", () => {
    const readme = readFileSync(CHART_README, "utf8");
    assert.equal(readme, readmeWithValues(readme));
    for (const key of ["`gateway.nodeSelector`", "`gateway.service.annotations`", "`global`"]) {
      assert.ok(readme.includes(`| ${key}`), key);
    }
  });

  it("values.schema.json describes every property (from the zod schema's descriptions)", () => {
    const undescribed: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (typeof node !== "object" || node === null) return;
      const schema = node as Record<string, unknown>;
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if (typeof (child as { description?: unknown }).description !== "string") {
          undescribed.push(`${path}${key}`);
        }
        walk(child, `${path}${key}.`);
      }
      walk(schema.items, `${path}[].`);
      for (const branch of (schema.anyOf as unknown[] | undefined) ?? []) walk(branch, path);
    };
    walk(chartValuesJsonSchema(), "");
    assert.deepEqual(undescribed, []);
  });

  it("values.schema.json refuses unknown keys wherever zod does, and lets global through", () => {
    // Every object but the free-form maps (labels, affinity, a provider's spec, global) is closed.
    const open: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (typeof node !== "object" || node === null) return;
      const schema = node as Record<string, unknown>;
      if (schema.type === "object" && schema.additionalProperties !== false) open.push(path);
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        walk(child, `${path}${key}.`);
      }
      walk(schema.items, `${path}[].`);
    };
    walk(chartValuesJsonSchema(), "");
    const freeForm =
      /(^global|labels|annotations|Labels|Annotations|nodeSelector|affinity|topologySpreadConstraints\.\[\]|providers\.\[\]\.spec)\.$/;
    assert.deepEqual(
      open.filter(path => !freeForm.test(path)),
      [],
    );
    assert.ok(open.includes("global."), "a parent chart's global values pass");
    const withGlobal = { ...defaultChartValues(), global: { imageRegistry: "mirror.example.com" } };
    assert.ok(parseChartValues(withGlobal).ok);
    const unknown = parseChartValues({
      ...defaultChartValues(),
      gateway: { ...defaultChartValues().gateway, nodeSelectr: {} },
    });
    assert.deepEqual(unknown.ok ? [] : unknown.errors.map(e => e.field), ["gateway.nodeSelectr"]);
  });

  it("refuses a trusted proxy that is not a network, naming the entry", () => {
    const values = defaultChartValues();
    const bad = parseChartValues({
      ...values,
      gateway: { ...values.gateway, trustedProxies: ["10.0.0.0/8", "lb.example.com"] },
    });
    assert.deepEqual(bad.ok ? [] : bad.errors, [
      {
        field: "gateway.trustedProxies.1",
        message: '"lb.example.com" is neither an IP address nor a CIDR',
      },
    ]);
  });

  it("installs the CRDs from crds/ (crds/ is a link to them)", () => {
    assert.equal(realpathSync(join(CHART, "crds")), realpathSync(join(ROOT, "crds")));
    assert.ok(readdirSync(join(CHART, "crds")).some(f => f.endsWith(".yaml")));
  });
});
