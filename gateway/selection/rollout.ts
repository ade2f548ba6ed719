// Batched rollout (Tengine-Ingress's `ingress-rollout*` / `secret-rollout*`, tengine-ingress.md
// §2) as one decision per object and gateway pod: serve the object's latest content, keep what
// this pod served before (its current revision), or serve nothing.
//
// Unlike Tengine, what a pod served survives a restart (the caller persists the last good view),
// and a delete can be rolled out too: a rolled-out object that is deleted while something (the
// rollout orchestrator's finalizer) keeps it terminating is dropped only by the pods in the batch;
// the others keep serving it until the index reaches them or the object is gone.
import {
  parseIngressRollout,
  parseSecretRollout,
  rolloutApplies,
  type RolloutConfig,
} from "../../core/annotations/rollout";
import { ok, type Result } from "../../core/result";
import { NGINX_ANNOTATION_PREFIX } from "../../core/names";

export type RolloutWord = "ingress" | "secret";

export interface RolloutSubject {
  annotations: Readonly<Record<string, string>> | undefined;
  /** `metadata.deletionTimestamp` is set: the object is being deleted. */
  terminating: boolean;
}

export type Serve = "latest" | "previous" | "none";

export interface RolloutChoice {
  serve: Serve;
  /** Why not the latest content; undefined when the latest (or its deletion) is applied. */
  held?: string;
}

const PARSERS: Record<
  RolloutWord,
  (a: RolloutSubject["annotations"]) => Result<RolloutConfig | undefined>
> = {
  ingress: parseIngressRollout,
  secret: parseSecretRollout,
};

const NO_ROLLOUT: Result<RolloutConfig | undefined> = ok(undefined);
const parsedCache: Record<RolloutWord, WeakMap<object, Result<RolloutConfig | undefined>>> = {
  ingress: new WeakMap(),
  secret: new WeakMap(),
};

/**
 * The rollout annotations, parsed once per annotations object (a cached object keeps its
 * annotations object until it changes): at 20k Ingresses every view recomputes every choice.
 * Without the `<word>-rollout` flag there is no rollout, whatever else is set (Tengine: Active).
 */
function parseCached(
  word: RolloutWord,
  annotations: RolloutSubject["annotations"],
): Result<RolloutConfig | undefined> {
  if (annotations?.[`${NGINX_ANNOTATION_PREFIX}${word}-rollout`] === undefined) return NO_ROLLOUT;
  const cache = parsedCache[word];
  let parsed = cache.get(annotations);
  if (parsed === undefined) {
    parsed = PARSERS[word](annotations);
    cache.set(annotations, parsed);
  }
  return parsed;
}

/**
 * What gateway pod `ordinal` serves of one object. `hasPrevious`: the pod served a version of it
 * in its last good view.
 */
export function rolloutChoice(
  word: RolloutWord,
  subject: RolloutSubject,
  ordinal: number,
  hasPrevious: boolean,
): RolloutChoice {
  const keep: Serve = hasPrevious ? "previous" : "none";
  const parsed = parseCached(word, subject.annotations);
  if (!parsed.ok) {
    const detail = parsed.errors.map(e => `${e.field}: ${e.message}`).join("; ");
    return { serve: keep, held: `invalid rollout annotations (${detail})` };
  }
  const applies = rolloutApplies(parsed.value, ordinal);
  if (applies) return { serve: subject.terminating ? "none" : "latest" };
  const index = parsed.value?.indexId ?? 0;
  const what = subject.terminating ? "its deletion" : "this revision";
  return {
    serve: keep,
    held: `${what} is rolled out to ordinals below ${index}; this is ${ordinal}`,
  };
}
