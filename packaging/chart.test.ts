// The Helm chart (charts/bulwark) keeps the generators' values: same keys, same defaults, the
// package's version. Rendering it is test/integration/packaging/helm.test.ts (needs helm).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { ROOT } from "./build";
import { defaultValues, parseValues } from "./manifests";
import { CHART_SCHEMA, chartSchemaText, chartValuesJsonSchema } from "./manifests/chart-schema";
import packageJson from "../package.json";

const CHART = join(ROOT, "charts", "bulwark");

describe("charts/bulwark", () => {
  it("values.yaml holds exactly the generators' defaults (the namespace is the release's)", () => {
    const chartValues = load(readFileSync(join(CHART, "values.yaml"), "utf8"));
    const { namespace, ...defaults } = defaultValues();
    assert.equal(namespace, "bulwark-system");
    assert.deepEqual(chartValues, defaults);
    assert.ok(parseValues({ namespace, ...(chartValues as object) }).ok);
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
  });

  it("installs the CRDs from crds/ (crds/ is a link to them)", () => {
    assert.equal(realpathSync(join(CHART, "crds")), realpathSync(join(ROOT, "crds")));
    assert.ok(readdirSync(join(CHART, "crds")).some(f => f.endsWith(".yaml")));
  });
});
