// The edge-health capability's settings, from the module's environment through one zod schema:
// a typo stops the module naming the variable (a NaN resync would fire every millisecond).
import { z } from "zod";
import { integer, namespaceName, readEnv } from "../../core/env-settings";
import { MAX_UNKNOWN_SECONDS_LIMIT, type VoteRules } from "../../core/edge";

const schema = z.object({
  BULWARK_EDGE_ZONE_NAMESPACE: namespaceName("BULWARK_EDGE_ZONE_NAMESPACE", "kube-system"),
  BULWARK_EDGE_MAX_UNKNOWN_SECONDS: integer(
    "BULWARK_EDGE_MAX_UNKNOWN_SECONDS",
    86_400,
    0,
    MAX_UNKNOWN_SECONDS_LIMIT,
  ),
  BULWARK_EDGE_RESYNC_SECONDS: integer("BULWARK_EDGE_RESYNC_SECONDS", 10, 1, 3600),
  BULWARK_EDGE_MAX_VOTE_TERM_SECONDS: integer("BULWARK_EDGE_MAX_VOTE_TERM_SECONDS", 600, 10, 3600),
  BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS: integer("BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS", 60, 0, 600),
});

export interface EdgeSettings {
  /** Namespace of the edge-health-zone-config ConfigMap (kube-system, where SuperEdge reads it). */
  zoneConfigNamespace: string;
  /** Longest a voted-healthy node may stay Unknown and protected, unless the node or zone says otherwise. */
  defaultMaxUnknownMs: number;
  resyncMs: number;
  /** How a vote's term is judged (core/edge/vote.ts). */
  voteRules: VoteRules;
}

export function loadEdgeSettings(env: NodeJS.ProcessEnv = process.env): EdgeSettings {
  const s = readEnv(schema, env, "edge-health");
  return {
    zoneConfigNamespace: s.BULWARK_EDGE_ZONE_NAMESPACE,
    defaultMaxUnknownMs: s.BULWARK_EDGE_MAX_UNKNOWN_SECONDS * 1000,
    resyncMs: s.BULWARK_EDGE_RESYNC_SECONDS * 1000,
    voteRules: {
      maxTermMs: s.BULWARK_EDGE_MAX_VOTE_TERM_SECONDS * 1000,
      maxClockSkewMs: s.BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS * 1000,
    },
  };
}
