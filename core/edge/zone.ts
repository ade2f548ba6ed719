// The `edge-health-zone-config` ConfigMap and the voting groups it defines.
//
// What SuperEdge does: the ConfigMap (kube-system by default, as SuperEdge reads it) is read by the
// *daemon*, not by the admission webhook. With it absent or `TaintZoneAdmission: "false"`, every non-master node
// checks and votes on every other (one group: the cluster). With `"true"`, a node's group is the
// non-master nodes with the same `superedgehealth/topology-zone` label value, and a node without
// the label is a group of one (it checks only itself, so it is never voted on). The webhook then
// trusts whatever vote annotation is on the node. Bulwark does the same: the daemon uses
// `votingGroup` to pick its peers, and the decision uses the group's size to discard a vote that
// no live group could have produced (a group of one never votes; an annotation on such a node is
// left over from an earlier layout).
//
// SuperEdge's code compares the key with "false" and nothing else: once the ConfigMap exists, a
// missing key, "true", "True", "0" or "" all turn zones on. Bulwark reads it the same way, so a
// migrated site keeps its zones (reading "True" as off would merge every zone into one group that
// cannot reach a majority, and protect nothing).
//
// Bulwark adds `MaxUnknownSeconds`, the zone-wide autonomy limit (see decision.ts). A bad value
// of it is reported and ignored; the zones still apply.
import { z } from "zod";
import { EDGE_MAX_UNKNOWN_KEY, EDGE_TAINT_ZONE_ADMISSION_KEY, EDGE_ZONE_LABEL } from "../names";
import { ok, quote, type Result } from "../result";
import type { Node } from "./types";

/**
 * Control-plane role labels. SuperEdge (≤ v0.8.0) skipped only `master`, so kubeadm's newer
 * `control-plane` nodes were probed and counted; Bulwark skips both, which is what was meant.
 */
export const CONTROL_PLANE_LABELS = [
  "node-role.kubernetes.io/master",
  "node-role.kubernetes.io/control-plane",
] as const;

/** An upper bound on any autonomy limit: a year. Longer is "forever", which the limit exists to prevent. */
export const MAX_UNKNOWN_SECONDS_LIMIT = 365 * 24 * 60 * 60;

export interface ZoneConfig {
  /** Vote within `superedgehealth/topology-zone` groups rather than cluster-wide. */
  taintZoneAdmission: boolean;
  /** The zone-wide autonomy limit, when the ConfigMap sets one. */
  maxUnknownSeconds?: number;
  /** Values that were ignored, naming the key: for a log line or an Event. */
  warnings?: string[];
}

/** The configuration when the ConfigMap is absent: SuperEdge's default, one cluster-wide group. */
export const DEFAULT_ZONE_CONFIG: ZoneConfig = { taintZoneAdmission: false };

/** Whole seconds in 0..MAX_UNKNOWN_SECONDS_LIMIT, written as a decimal string (a ConfigMap value or annotation). */
export const secondsStringSchema = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a whole number of seconds, e.g. "600"')
  .transform(Number)
  .refine(n => n <= MAX_UNKNOWN_SECONDS_LIMIT, `must be at most ${MAX_UNKNOWN_SECONDS_LIMIT}`);

/**
 * Parses the ConfigMap's `data`: undefined means there is no ConfigMap (zones off); a ConfigMap
 * without data is `{}` (zones on, as SuperEdge reads it). Never fails: see above.
 */
export function parseZoneConfig(
  data: Readonly<Record<string, string>> | undefined,
): Result<ZoneConfig> {
  if (data === undefined) return ok({ ...DEFAULT_ZONE_CONFIG });
  const config: ZoneConfig = {
    taintZoneAdmission: data[EDGE_TAINT_ZONE_ADMISSION_KEY] !== "false",
  };
  const raw = data[EDGE_MAX_UNKNOWN_KEY];
  if (raw !== undefined) {
    const parsed = secondsStringSchema.safeParse(raw);
    if (parsed.success) config.maxUnknownSeconds = parsed.data;
    else {
      const message = parsed.error.issues.map(i => i.message).join("; ");
      config.warnings = [`data.${EDGE_MAX_UNKNOWN_KEY} ${message}; got ${quote(raw)}, ignored`];
    }
  }
  return ok(config);
}

function isControlPlane(node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  return CONTROL_PLANE_LABELS.some(label => label in labels);
}

/**
 * The nodes that vote on `node` (itself included), as SuperEdge's daemon forms them. Empty for a
 * control-plane node, which is never voted on. `nodes` is the full node list (a cache).
 */
export function votingGroup(options: {
  node: Node;
  nodes: readonly Node[];
  config: ZoneConfig | undefined;
}): Node[] {
  const { node, nodes, config } = options;
  if (isControlPlane(node)) return [];
  const candidates = nodes.filter(n => !isControlPlane(n));
  if (!config?.taintZoneAdmission) return candidates;
  const zone = node.metadata?.labels?.[EDGE_ZONE_LABEL];
  if (zone === undefined) return [node];
  return candidates.filter(n => n.metadata?.labels?.[EDGE_ZONE_LABEL] === zone);
}
