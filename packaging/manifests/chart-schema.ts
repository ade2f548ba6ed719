// charts/bulwark/values.schema.json, from the same zod schema the generators check values with, so
// `helm install --set gateway.replicas=0` fails naming the field, as `npm run build` would.
//   npx tsx packaging/manifests/chart-schema.ts && npx prettier --write charts/bulwark/values.schema.json
// rewrites it (packaging/chart.test.ts fails while it is stale).
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { chartValuesSchema } from "./values";

const CHART = join(resolve(__dirname, "../.."), "charts", "bulwark");
export const CHART_SCHEMA = join(CHART, "values.schema.json");

/** The chart's values: everything but the namespace and release name, which are Helm's. */
export function chartValuesJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(chartValuesSchema) as Record<string, unknown>;
}

export function chartSchemaText(): string {
  return `${JSON.stringify(chartValuesJsonSchema(), null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(CHART_SCHEMA, chartSchemaText());
  console.log(`wrote ${CHART_SCHEMA}`);
}
