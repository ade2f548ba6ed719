// The `edge-health-zone-config` ConfigMap and the voting groups it defines.
//
// What SuperEdge does (reference/edge-health.md §1-2): the ConfigMap is read by the *daemon*, not
// by the admission webhook. With it absent or `TaintZoneAdmission: "false"`, every non-master node
// checks and votes on every other (one group: the cluster). With `"true"`, a node's group is the
// non-master nodes with the same `superedgehealth/topology-zone` label value, and a node without
// the label is a group of one (it checks only itself, so it is never voted on). The webhook then
// trusts whatever vote annotation is on the node. Bulwark does the same: the daemon uses
// `votingGroup` to pick its peers, and the decision uses the group's size to discard a vote that
// no live group could have produced (a group of one never votes; an annotation on such a node is
// left over from an earlier layout).
//
// Bulwark adds `MaxUnknownSeconds`, the zone-wide autonomy limit (see decision.ts).
import { z } from "zod";
import { EDGE_MAX_UNKNOWN_KEY, EDGE_TAINT_ZONE_ADMISSION_KEY, EDGE_ZONE_LABEL } from "../names";
import { ok, type Result } from "../result";
import { parseFields } from "../permission/field-errors";
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
}

/** The configuration when the ConfigMap is absent: SuperEdge's default, one cluster-wide group. */
export const DEFAULT_ZONE_CONFIG: ZoneConfig = { taintZoneAdmission: false };

/** Whole seconds in 0..MAX_UNKNOWN_SECONDS_LIMIT, written as a decimal string (a ConfigMap value or annotation). */
export const secondsStringSchema = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a whole number of seconds, e.g. "600"')
  .transform(Number)
  .refine(n => n <= MAX_UNKNOWN_SECONDS_LIMIT, `must be at most ${MAX_UNKNOWN_SECONDS_LIMIT}`);

// Unknown keys are allowed: the ConfigMap may carry other tools' settings.
const zoneConfigDataSchema = z.object({
  [EDGE_TAINT_ZONE_ADMISSION_KEY]: z
    .enum(["true", "false"], { error: 'must be "true" or "false"' })
    .optional(),
  [EDGE_MAX_UNKNOWN_KEY]: secondsStringSchema.optional(),
});

/** Parses the ConfigMap's `data`; undefined (no ConfigMap, or no data) gives the default. */
export function parseZoneConfig(
  data: Readonly<Record<string, string>> | undefined,
): Result<ZoneConfig> {
  if (data === undefined) return ok({ ...DEFAULT_ZONE_CONFIG });
  const parsed = parseFields(zoneConfigDataSchema, data, "data");
  if (!parsed.ok) return parsed;
  const config: ZoneConfig = {
    taintZoneAdmission: parsed.value[EDGE_TAINT_ZONE_ADMISSION_KEY] === "true",
  };
  const max = parsed.value[EDGE_MAX_UNKNOWN_KEY];
  if (max !== undefined) config.maxUnknownSeconds = max;
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
