// A node's own say in its autonomy, and what users see of it.
//
// `edge.bulwark.dev/autonomy` (as OpenYurt's `node.openyurt.io/autonomy-duration`, but bounded):
//   "false"  the node is never protected (opted out);
//   "true"   protected as voted, with the zone's or the default limit;
//   "<duration>" such as "600s", "90m", "1h30m", "24h": protected as voted, with this limit; "0s"
//            means no autonomy. At most MAX_UNKNOWN_SECONDS_LIMIT: "forever" is what the limit
//            exists to prevent.
// It supersedes `edge.bulwark.dev/max-unknown-seconds` (whole seconds), still read when the new
// one is absent. A value that does not parse is reported and ignored (the next source applies),
// so a typo can neither grant forever nor silently opt a node out.
//
// The `EdgeAutonomy` Node condition says what the reconciler decided, in the words of the
// decision table (decision.ts): status True while protected; its reason one of the REASONS below;
// lastTransitionTime when the status last changed.
import { z } from "zod";
import type { Decision, DecisionRule } from "./decision";
import type { KubeTime, NodeCondition } from "./types";
import { MAX_UNKNOWN_SECONDS_LIMIT } from "./zone";
import { EDGE_AUTONOMY_CONDITION } from "../names";

export type AutonomySetting = { optedOut: true } | { optedOut: false; limitSeconds?: number };

const DURATION = /^(?:(\d{1,7})h)?(?:(\d{1,9})m)?(?:(\d{1,9})s)?$/;

/** The annotation's meaning, or an error message for the annotation (without its name). */
export const autonomySchema = z.string().transform((text, ctx): AutonomySetting => {
  if (text === "false") return { optedOut: true };
  if (text === "true") return { optedOut: false };
  const match = DURATION.exec(text);
  if (text === "" || match === null) {
    ctx.addIssue({
      code: "custom",
      message: 'must be "true", "false" or a duration such as "600s", "90m", "1h30m"',
    });
    return z.NEVER;
  }
  const [, h = "0", m = "0", s = "0"] = match;
  const seconds = Number(h) * 3600 + Number(m) * 60 + Number(s);
  if (seconds > MAX_UNKNOWN_SECONDS_LIMIT) {
    ctx.addIssue({
      code: "custom",
      message: `must be at most ${MAX_UNKNOWN_SECONDS_LIMIT}s (a year)`,
    });
    return z.NEVER;
  }
  return { optedOut: false, limitSeconds: seconds };
});

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
