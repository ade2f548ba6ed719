// The edge-health capability's settings, from the module's environment through one zod schema:
// a typo stops the module naming the variable (a NaN resync would fire every millisecond).
import { z } from "zod";
import { integer, namespaceName, oneOf, readEnv } from "../../core/env-settings";
import { MAX_UNKNOWN_SECONDS_LIMIT, type VoteRules } from "../../core/edge";

export const edgeSettingsSchema = z.object({
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
  BULWARK_EDGE_VOTES: oneOf("BULWARK_EDGE_VOTES", ["bulwark", "superedge"], "bulwark"),
  BULWARK_EDGE_SUPEREDGE_NAMESPACE: namespaceName(
    "BULWARK_EDGE_SUPEREDGE_NAMESPACE",
    "kube-system",
  ),
  BULWARK_EDGE_SUPEREDGE_POD_LABEL: z
    .string()
    .default("name=edge-health")
    .refine(text => /^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*$/.test(text), {
      message: "BULWARK_EDGE_SUPEREDGE_POD_LABEL must be one key=value label",
    }),
});

export interface EdgeSettings {
  /** Namespace of the edge-health-zone-config ConfigMap (kube-system, where SuperEdge reads it). */
  zoneConfigNamespace: string;
  /** Longest a voted-healthy node may stay Unknown and protected, unless the node or zone says otherwise. */
  defaultMaxUnknownMs: number;
  resyncMs: number;
  /** How a vote's term is judged (core/edge/vote.ts). */
  voteRules: VoteRules;
  /**
   * Whose daemons vote: Bulwark's (votes with a term) or SuperEdge's (nodeunhealth, fresh while
   * their pods on the node's peers are live); then where those pods are and their label.
   */
  votes: "bulwark" | "superedge";
  superEdgePods: { namespace: string; labels: Record<string, string> };
}

export function loadEdgeSettings(env: NodeJS.ProcessEnv = process.env): EdgeSettings {
  const s = readEnv(edgeSettingsSchema, env, "edge-health");
  return {
    zoneConfigNamespace: s.BULWARK_EDGE_ZONE_NAMESPACE,
    defaultMaxUnknownMs: s.BULWARK_EDGE_MAX_UNKNOWN_SECONDS * 1000,
    resyncMs: s.BULWARK_EDGE_RESYNC_SECONDS * 1000,
    voteRules: {
      maxTermMs: s.BULWARK_EDGE_MAX_VOTE_TERM_SECONDS * 1000,
      maxClockSkewMs: s.BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS * 1000,
    },
    votes: s.BULWARK_EDGE_VOTES,
    superEdgePods: {
      namespace: s.BULWARK_EDGE_SUPEREDGE_NAMESPACE,
      labels: Object.fromEntries([
        s.BULWARK_EDGE_SUPEREDGE_POD_LABEL.split("=", 2) as [string, string],
      ]),
    },
  };
}
