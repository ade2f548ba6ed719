// The canary family: ingress-nginx's canary annotations plus Tengine-Ingress's extensions, parsed
// field by field (canary-fields.ts), then checked as a whole and built into the config the gateway
// compiles (canary-rules.ts). The header pattern stays a source string, checked here by compiling
// it, so that the config stays plain data the gateway can persist and compare; the gateway compiles
// it once per configuration, never per request.
import { parseFamily, type Family } from "./family";
import { canaryFields, canaryFieldsSchema, canaryKey, type CanaryField } from "./canary-fields";
import { parseGoBool } from "../go-strconv";
import { canaryProblems, canaryWarnings, toCanaryConfig, type CanaryConfig } from "./canary-rules";
import type { Result } from "../result";

export const canarySchema = canaryFieldsSchema
  .superRefine((fields, ctx) => {
    for (const problem of canaryProblems(fields)) {
      ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
    }
  })
  .transform(toCanaryConfig);

export const canaryFamily: Family<CanaryConfig, CanaryField> = {
  name: "canary",
  fields: canaryFields,
  schema: canarySchema,
  warnings: canaryWarnings,
};

/**
 * Whether an Ingress says it is a canary: its `canary` annotation is set to anything but one of
 * ParseBool's false spellings. Decided on that one value alone, before and whatever the rest of
 * its annotations parse to, so that a canary is never served as a main: a broken one is served
 * as nothing ("canary: yes" too, which ingress-nginx would read as false and serve as a main).
 */
export function isCanaryIngress(
  annotations: Readonly<Record<string, string>> | undefined,
): boolean {
  const raw = annotations?.[canaryKey("enabled")];
  return raw !== undefined && parseGoBool(raw) !== false;
}

export function parseCanary(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<CanaryConfig | undefined> {
  return parseFamily(canaryFamily, annotations);
}

export { DEFAULT_CANARY_WEIGHT_TOTAL } from "./canary-rules";
export type {
  CanaryActions,
  CanaryConfig,
  CanaryMatch,
  CanarySource,
  ModRule,
} from "./canary-rules";
export type { HeaderAction, ModOperator, QueryParam } from "./canary-values";
