// The `EdgeAutonomy` Node condition says what the reconciler decided, in the words of the
// decision table (decision.ts): status True while protected; its reason one of the REASONS below;
// lastTransitionTime when the status last changed.
import type { Decision, DecisionRule } from "./decision";
import type { KubeTime, NodeCondition } from "./types";
import { EDGE_AUTONOMY_CONDITION } from "../names";

/** The condition's reason for each row of the decision table. */
export const REASONS: Record<DecisionRule, string> = {
  protected: "Voted",
  "vote-stale": "Stale",
  "over-limit": "LimitReached",
  "opted-out": "OptedOut",
  "vote-unhealthy": "VotedUnhealthy",
  "vote-none": "NoVote",
  "group-too-small": "GroupTooSmall",
  "not-unknown": "Connected",
  "no-ready-condition": "NoReadyCondition",
  "no-transition-time": "Unbounded",
};

/**
 * The EdgeAutonomy condition for `decision`, keeping `previous`'s lastTransitionTime while the
 * status holds; undefined when `previous` already has the same status and reason.
 */
export function autonomyCondition(
  decision: Decision,
  previous: NodeCondition | undefined,
  now: Date,
): NodeCondition | undefined {
  const status = decision.protect ? "True" : "False";
  const reason = REASONS[decision.rule];
  // The message changes every resync ("Unknown for 40s of ..."): only a new status or reason is
  // worth a write.
  if (previous?.status === status && previous.reason === reason) return undefined;
  const since: KubeTime =
    previous?.status === status && previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    type: EDGE_AUTONOMY_CONDITION,
    status,
    reason,
    message: decision.reason,
    lastTransitionTime: since,
  };
}
