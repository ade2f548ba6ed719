// Whether Bulwark shields a node from eviction: the decision table of issue 8, as one function.
//
// "Cloud link down" is what the API server sees: no kubelet heartbeat, so kube-controller-manager
// sets the node's Ready condition to Unknown. With the link up the kubelet reports True or False
// itself, and Kubernetes' normal behaviour applies (a node that says it is NotReady is not cut off).
//
// | cloud link (Ready)   | vote       | Unknown for          | outcome                          |
// |----------------------|------------|----------------------|----------------------------------|
// | up (True / False)    | any        | n/a                  | normal Kubernetes behaviour      |
// | no Ready condition   | any        | n/a                  | normal (nothing to reason about) |
// | down (Unknown)       | unhealthy  | any                  | normal eviction                  |
// | down (Unknown)       | none       | any                  | normal eviction                  |
// | down (Unknown)       | healthy    | < limit              | PROTECT: strip NoExecute, keep   |
// |                      |            |                      | the pods' endpoints ready        |
// | down (Unknown)       | healthy    | ≥ limit              | normal eviction (bounded)        |
// | down (Unknown)       | healthy    | unknown (no time)    | normal eviction (can't bound it) |
//
// Groups (see zone.ts for how they form; SuperEdge's strict majority of the whole group):
// | group size | what the daemons can say                    | outcome while Unknown            |
// |------------|---------------------------------------------|----------------------------------|
// | 0 (control plane) or 1 (alone in its zone) | never voted on; any annotation is stale → none | normal eviction |
// | 2          | the one peer's verdict decides (self + peer = 2 of 2; a cut-off node can't vote for itself through the API server) | as its vote |
// | ≥ 3        | strict majority; an even split (2|2) writes nothing, the last vote stays | as the vote on record |
// | whole group cut off | nobody can write, the last vote stays     | as that vote, until the limit    |
//
// The limit is what makes the last row safe: a node voted healthy whose peers are all cut off too
// (or that died right after the vote) keeps its pods only until it has been Unknown for the limit.
// It comes from the node's `edge.bulwark.dev/max-unknown-seconds` annotation, else the zone
// ConfigMap's `MaxUnknownSeconds`, else the caller's default. 0 means "no autonomy" (never
// protect), unlike OpenYurt where 0 means forever: Bulwark's limit exists to be bounded. An invalid
// annotation falls back to the next source and is reported, so a typo can't grant forever.
// After the limit nothing needs undoing: kube-controller-manager re-taints an Unknown node that
// lacks the taint every node-monitor-period, and Bulwark stops stripping it.
import { EDGE_MAX_UNKNOWN_ANNOTATION } from "../names";
import { nodeReady, timeMs, type Node } from "./types";
import { readVote } from "./vote";
import { secondsStringSchema, type ZoneConfig } from "./zone";

export type DecisionRule =
  | "protected"
  | "no-ready-condition"
  | "not-unknown"
  | "vote-unhealthy"
  | "vote-none"
  | "group-too-small"
  | "no-transition-time"
  | "over-limit";

export interface Decision {
  protect: boolean;
  /** Which row of the table applied: for metrics and tests. */
  rule: DecisionRule;
  /** A sentence for logs and Events. */
  reason: string;
  /** Annotation or ConfigMap problems met on the way; the decision stands regardless. */
  warnings: string[];
  /** When protection ends (epoch ms), if protected: the reconciler can requeue for then. */
  protectUntilMs?: number;
}

export interface ProtectInput {
  node: Node;
  now: Date;
  zoneConfig?: ZoneConfig;
  /** The autonomy limit when neither the node nor the ConfigMap sets one. */
  defaultMaxUnknownMs: number;
  /** Size of the node's voting group (zone.ts `votingGroup`), when the caller knows it. */
  groupSize?: number;
}

interface Limit {
  ms: number;
  source: string;
  warnings: string[];
}

/** The autonomy limit for `node`: its annotation, else the ConfigMap, else the default. */
export function autonomyLimit(input: Omit<ProtectInput, "now" | "groupSize">): Limit {
  const warnings: string[] = [];
  const raw = input.node.metadata?.annotations?.[EDGE_MAX_UNKNOWN_ANNOTATION];
  if (raw !== undefined) {
    const parsed = secondsStringSchema.safeParse(raw);
    if (parsed.success) {
      return {
        ms: parsed.data * 1000,
        source: `annotation ${EDGE_MAX_UNKNOWN_ANNOTATION}`,
        warnings,
      };
    }
    const message = parsed.error.issues.map(i => i.message).join("; ");
    warnings.push(
      `metadata.annotations["${EDGE_MAX_UNKNOWN_ANNOTATION}"]: ${message}; got ${JSON.stringify(raw)}, ignored`,
    );
  }
  const zoneSeconds = input.zoneConfig?.maxUnknownSeconds;
  if (zoneSeconds !== undefined) {
    return { ms: zoneSeconds * 1000, source: "zone ConfigMap", warnings };
  }
  return { ms: input.defaultMaxUnknownMs, source: "default", warnings };
}

function no(rule: DecisionRule, reason: string, warnings: string[]): Decision {
  return { protect: false, rule, reason, warnings };
}

/** The decision table above, for one node at `now`. */
export function protectNode(input: ProtectInput): Decision {
  const { node, now, groupSize } = input;
  const ready = nodeReady(node);
  if (ready === undefined) return no("no-ready-condition", "node reports no Ready condition", []);
  if (ready.status !== "Unknown") {
    return no("not-unknown", `node is Ready=${ready.status}, not cut off`, []);
  }
  const { vote, warnings } = readVote(node);
  if (vote === "unhealthy") return no("vote-unhealthy", "peers voted the node unhealthy", warnings);
  if (vote === "none") return no("vote-none", "no vote on the node", warnings);
  if (groupSize !== undefined && groupSize < 2) {
    return no(
      "group-too-small",
      `voting group of ${groupSize} cannot vote; the healthy vote is stale`,
      warnings,
    );
  }
  const since = timeMs(ready.lastTransitionTime);
  if (since === undefined) {
    return no(
      "no-transition-time",
      "Ready has no lastTransitionTime, so autonomy can't be bounded",
      warnings,
    );
  }
  const limit = autonomyLimit(input);
  warnings.push(...limit.warnings);
  // A clock behind the controller's makes the duration negative: count that as just gone Unknown.
  const unknownFor = Math.max(0, now.getTime() - since);
  const seconds = Math.floor(unknownFor / 1000);
  const limitSeconds = Math.floor(limit.ms / 1000);
  if (unknownFor >= limit.ms) {
    return no(
      "over-limit",
      `Unknown for ${seconds}s, at or past the ${limitSeconds}s limit (${limit.source})`,
      warnings,
    );
  }
  return {
    protect: true,
    rule: "protected",
    reason: `voted healthy, Unknown for ${seconds}s of ${limitSeconds}s (${limit.source})`,
    warnings,
    protectUntilMs: since + limit.ms,
  };
}

/** What the endpoint functions need to decide per node: a node cache and the decision inputs. */
export interface ProtectionContext {
  /** The node cache (a watch cache, never a GET per address). */
  node: (name: string) => Node | undefined;
  now: Date;
  zoneConfig?: ZoneConfig;
  defaultMaxUnknownMs: number;
  /** The node's voting group size, when the caller tracks it (zone.ts `votingGroup`). */
  groupSize?: (node: Node) => number | undefined;
}

/**
 * `protectNode` per node name, memoized for one call: an Endpoints object lists one node many
 * times. Undefined when the node is not in the cache (it is then not protected).
 */
export function protectionByName(
  ctx: ProtectionContext,
): (name: string) => { node: Node; decision: Decision } | undefined {
  const memo = new Map<string, { node: Node; decision: Decision } | undefined>();
  return name => {
    if (memo.has(name)) return memo.get(name);
    const node = ctx.node(name);
    const entry =
      node === undefined
        ? undefined
        : {
            node,
            decision: protectNode({
              node,
              now: ctx.now,
              zoneConfig: ctx.zoneConfig,
              defaultMaxUnknownMs: ctx.defaultMaxUnknownMs,
              groupSize: ctx.groupSize?.(node),
            }),
          };
    memo.set(name, entry);
    return entry;
  };
}
