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
// | down (Unknown)       | stale      | any                  | normal eviction (vote.ts: a      |
// |                      |            |                      | healthy vote past or without its |
// |                      |            |                      | term is no vote)                 |
// | down (Unknown)       | healthy    | < limit              | PROTECT: strip NoExecute, keep   |
// |                      |            |                      | the pods' endpoints ready        |
// | down (Unknown)       | healthy    | ≥ limit              | normal eviction (bounded)        |
// | down (Unknown)       | healthy    | unknown (no time)    | normal eviction (can't bound it) |
//
// Groups (see zone.ts for how they form; SuperEdge's strict majority of the whole group):
// | group size | what the daemons can say                    | outcome while Unknown            |
// |------------|---------------------------------------------|----------------------------------|
// | 0 (control plane) or 1 (alone in its zone) | never voted on; any annotation is stale → none | normal eviction |
// | 2          | "true" needs both: the node's word on itself and its peer's. The one live peer of a dead or powered-off node can write neither value alone, so the dead node's last "true" is not refreshed and goes stale within one term | protected while both say so; else normal eviction after the term |
// | ≥ 3        | strict majority; an even split (2|2) writes nothing, the last vote's term runs out | as the vote on record, within its term |
// | whole group cut off or all its daemons stopped | nobody refreshes the term | normal eviction after the term |
//
// The term (vote.ts) bounds how long a vote outlives the daemons that made it; the limit bounds
// how long a node that its live peers keep voting healthy may stay Unknown (its peers may be cut
// off from it in a way they cannot see, or the node may be up but its workloads wedged).
// It comes from the node's `edge.bulwark.dev/max-unknown-seconds` annotation, else the zone
// ConfigMap's `MaxUnknownSeconds`, else the caller's default. 0 means "no autonomy" (never
// protect), unlike OpenYurt where 0 means forever: Bulwark's limit exists to be bounded. An invalid
// annotation falls back to the next source and is reported, so a typo can't grant forever.
// After the limit nothing needs undoing: kube-controller-manager re-taints an Unknown node that
// lacks the taint every node-monitor-period, and Bulwark stops stripping it.
import { EDGE_AUTONOMY_ANNOTATION, EDGE_MAX_UNKNOWN_ANNOTATION } from "../names";
import { quote } from "../result";
import { autonomySchema } from "./autonomy";
import { nodeReady, timeMs, type Node } from "./types";
import {
  DEFAULT_VOTE_RULES,
  readSuperEdgeVote,
  readVote,
  type VoteReading,
  type VoteRules,
} from "./vote";
import { secondsStringSchema, type ZoneConfig } from "./zone";

export type DecisionRule =
  | "protected"
  | "no-ready-condition"
  | "not-unknown"
  | "vote-unhealthy"
  | "vote-none"
  | "vote-stale"
  | "group-too-small"
  | "no-transition-time"
  | "over-limit"
  | "opted-out";

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
  /** How a vote's term is judged (vote.ts); the defaults when absent. */
  voteRules?: VoteRules;
  /** Set when SuperEdge's daemons vote: its peers that are live witnesses (vote.ts). */
  superEdgeWitnesses?: number;
}

interface Limit {
  ms: number;
  source: string;
  warnings: string[];
  /** The node's autonomy annotation says "false". */
  optedOut?: true;
}

/**
 * The autonomy limit for `node`: its autonomy annotation (autonomy.ts), else its older
 * max-unknown-seconds annotation, else the ConfigMap, else the default.
 */
export function autonomyLimit(input: Omit<ProtectInput, "now" | "groupSize" | "voteRules">): Limit {
  const warnings: string[] = [];
  const annotations = input.node.metadata?.annotations ?? {};
  const autonomy = annotations[EDGE_AUTONOMY_ANNOTATION];
  if (autonomy !== undefined) {
    const parsed = autonomySchema.safeParse(autonomy);
    const source = `annotation ${EDGE_AUTONOMY_ANNOTATION}`;
    if (parsed.success) {
      const setting = parsed.data;
      if (setting.optedOut) return { ms: 0, source, warnings, optedOut: true };
      if (setting.limitSeconds !== undefined)
        return { ms: setting.limitSeconds * 1000, source, warnings };
    } else {
      const message = parsed.error.issues.map(i => i.message).join("; ");
      warnings.push(
        `metadata.annotations["${EDGE_AUTONOMY_ANNOTATION}"]: ${message}; got ${quote(autonomy)}, ignored`,
      );
    }
  }
  const raw = annotations[EDGE_MAX_UNKNOWN_ANNOTATION];
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
      `metadata.annotations["${EDGE_MAX_UNKNOWN_ANNOTATION}"]: ${message}; got ${quote(raw)}, ignored`,
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

/** The vote on record: Bulwark's daemons' (with a term), or SuperEdge's (with witnesses). */
function voteOf(input: ProtectInput): VoteReading {
  if (input.superEdgeWitnesses === undefined) {
    return readVote(input.node, input.now, input.voteRules ?? DEFAULT_VOTE_RULES);
  }
  // The peers that, with the node's own word, make a strict majority of its group.
  const needed = Math.floor((input.groupSize ?? 0) / 2);
  return readSuperEdgeVote(input.node, { live: input.superEdgeWitnesses, needed });
}

/** The row and reason when the vote itself rules protection out. */
function voteRefusal(reading: VoteReading): [DecisionRule, string] | undefined {
  if (reading.vote === "unhealthy") return ["vote-unhealthy", "peers voted the node unhealthy"];
  if (reading.vote === "none") return ["vote-none", "no vote on the node"];
  if (reading.vote === "stale") return ["vote-stale", `the vote is stale: ${reading.staleReason}`];
  return undefined;
}

/** The decision table above, for one node at `now`. */
export function protectNode(input: ProtectInput): Decision {
  const { node, now, groupSize } = input;
  const ready = nodeReady(node);
  if (ready === undefined) return no("no-ready-condition", "node reports no Ready condition", []);
  if (ready.status !== "Unknown") {
    return no("not-unknown", `node is Ready=${ready.status}, not cut off`, []);
  }
  const limit = autonomyLimit(input);
  if (limit.optedOut) {
    return no("opted-out", `the node opted out (${limit.source}: "false")`, limit.warnings);
  }
  const reading = voteOf(input);
  const { warnings, term } = reading;
  const refused = voteRefusal(reading);
  if (refused) return no(refused[0], refused[1], warnings);
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
    // Whichever ends first: the autonomy limit or the vote's term (a refresh extends the term).
    protectUntilMs: Math.min(since + limit.ms, term?.validUntilMs ?? Number.POSITIVE_INFINITY),
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
  voteRules?: VoteRules;
  /** With SuperEdge's daemons voting: the node's live witnesses (vote.ts `readSuperEdgeVote`). */
  superEdgeWitnesses?: (node: Node) => number | undefined;
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
              voteRules: ctx.voteRules,
              superEdgeWitnesses: ctx.superEdgeWitnesses?.(node),
            }),
          };
    memo.set(name, entry);
    return entry;
  };
}
