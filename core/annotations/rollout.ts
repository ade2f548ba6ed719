// Tengine-Ingress batched rollout (tengine-ingress.md §2): `<word>-rollout*` on an Ingress
// ("ingress") or on a Secret ("secret"). One schema for both, parametrized by the prefix word.
import { z } from "zod";
import { keyOf, parseFamily, type AnnotationField, type Family } from "./family";
import {
  annotation,
  bad,
  good,
  parseBool,
  parseIntIn,
  textProblem,
  type Parsed,
} from "./validators";
import type { Result } from "../result";

export type RolloutWord = "ingress" | "secret";
type RolloutField = "enabled" | "currentRevision" | "updateRevision" | "indexId";

// Pod ordinals come from a StatefulSet's pod names; no real one reaches this.
const MAX_INDEX = 0x7fffffff;

function rolloutFields(word: RolloutWord): Record<RolloutField, AnnotationField> {
  const object = word === "ingress" ? "Ingress" : "Secret";
  return {
    enabled: {
      annotation: `${word}-rollout`,
      type: "boolean",
      default: "false",
      doc: `Roll this ${object} out in batches of gateway pods, by ${word}-rollout-index-id.`,
    },
    currentRevision: {
      annotation: `${word}-rollout-current-revision`,
      type: "string",
      default: "",
      doc: "Revision being replaced; for the rollout orchestrator, never compared.",
    },
    updateRevision: {
      annotation: `${word}-rollout-update-revision`,
      type: "string",
      default: "",
      doc: "Revision being rolled out; for the rollout orchestrator, never compared.",
    },
    indexId: {
      annotation: `${word}-rollout-index-id`,
      type: "integer",
      default: "0",
      doc: "Pods with ordinal below this apply the update; -1 means all (done); default 0, none.",
    },
  };
}

function parseIndex(raw: string): Parsed<number> {
  if (raw === "-1") return good(-1);
  const index = parseIntIn(raw, 0, MAX_INDEX);
  return index.ok ? index : bad(`-1 or an integer between 0 and ${MAX_INDEX}`, raw);
}

function parseRevision(raw: string): Parsed<string> {
  const problem = textProblem(raw);
  return problem === undefined ? good(raw) : bad("a revision name", raw, `it ${problem}`);
}

export const rolloutSchema = z
  .object({
    enabled: annotation(parseBool).optional(),
    currentRevision: annotation(parseRevision).optional(),
    updateRevision: annotation(parseRevision).optional(),
    indexId: annotation(parseIndex).optional(),
  } satisfies Record<RolloutField, z.ZodType>)
  .transform(v => ({
    enabled: v.enabled ?? false,
    currentRevision: v.currentRevision,
    updateRevision: v.updateRevision,
    /** Tengine's code default is 0 (one doc page says -1): with the flag on, no pod applies. */
    indexId: v.indexId ?? 0,
  }));

export type RolloutConfig = z.output<typeof rolloutSchema>;

/** The rollout family for Ingresses ("ingress") or Secrets ("secret"). */
export function rolloutFamily(word: RolloutWord): Family<RolloutConfig, RolloutField> {
  const family: Family<RolloutConfig, RolloutField> = {
    name: word === "ingress" ? "ingress-rollout" : "secret-rollout",
    fields: rolloutFields(word),
    schema: rolloutSchema,
    warnings: (config, present) => rolloutWarnings(family, config, present),
  };
  return family;
}

function rolloutWarnings(
  family: Family<RolloutConfig, RolloutField>,
  config: RolloutConfig,
  present: ReadonlySet<RolloutField>,
): string[] {
  const flag = keyOf(family, "enabled");
  if (!config.enabled) {
    const ignored = [...present].filter(f => f !== "enabled").map(f => keyOf(family, f));
    return ignored.map(key => `${key} is ignored because ${flag} is not "true"`);
  }
  if (!present.has("indexId")) {
    return [
      `${flag} is "true" without ${keyOf(family, "indexId")}: no pod applies this update yet`,
    ];
  }
  return [];
}

export const ingressRolloutFamily = rolloutFamily("ingress");
export const secretRolloutFamily = rolloutFamily("secret");

export function parseIngressRollout(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RolloutConfig | undefined> {
  return parseFamily(ingressRolloutFamily, annotations);
}

export function parseSecretRollout(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RolloutConfig | undefined> {
  return parseFamily(secretRolloutFamily, annotations);
}

/**
 * Tengine's decision (GetIngressGrayStatus): whether the gateway pod with this ordinal applies the
 * object's current content. podOrdinal is -1 when unknown. No rollout config means it applies.
 */
export function rolloutApplies(config: RolloutConfig | undefined, podOrdinal: number): boolean {
  if (config === undefined || !config.enabled) return true;
  if (config.indexId === -1) return true;
  return config.indexId > 0 && podOrdinal >= 0 && podOrdinal < config.indexId;
}

const ORDINAL = /^.*-([0-9]+)$/;

/** A StatefulSet pod's ordinal from its name ("gateway-3" gives 3), or -1, as Tengine reads it. */
export function podOrdinalFromName(podName: string): number {
  const ordinal = Number(ORDINAL.exec(podName)?.[1] ?? NaN);
  return Number.isSafeInteger(ordinal) ? ordinal : -1;
}
