// What users see of a node's autonomy: the EdgeAutonomy condition (kubectl describe node, and
// `kubectl get nodes -o custom-columns=...`) and an Event when protection starts or ends.
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1NodeCondition,
} from "@kubernetes/client-node";
import { Log } from "pepr";
import { autonomyCondition, type Decision, type Node, type NodeCondition } from "../../core/edge";
import {
  EDGE_AUTONOMY_ANNOTATION,
  EDGE_AUTONOMY_CONDITION,
  EDGE_HEALTH_ANNOTATION,
  EDGE_MAX_UNKNOWN_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
} from "../../core/names";
import { recordEvent } from "../pepr/events";

const SCOPE_ANNOTATIONS = [
  EDGE_HEALTH_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
  EDGE_AUTONOMY_ANNOTATION,
  EDGE_MAX_UNKNOWN_ANNOTATION,
];

/**
 * Nodes edge health speaks about: voted on, carrying an autonomy setting, or already showing the
 * condition. Other nodes (a cloud worker pool) never get a condition of Bulwark's.
 */
export function inScope(node: Node): boolean {
  const annotations = node.metadata?.annotations ?? {};
  return (
    SCOPE_ANNOTATIONS.some(key => key in annotations) ||
    (node.status?.conditions ?? []).some(c => c.type === EDGE_AUTONOMY_CONDITION)
  );
}

let core: CoreV1Api | undefined;
function api(): CoreV1Api {
  if (core) return core;
  const kc = new KubeConfig();
  kc.loadFromDefault();
  core = kc.makeApiClient(CoreV1Api);
  return core;
}

/** Writes the condition when its status or reason changed, with an Event at each start and end. */
export async function reconcileNodeAutonomy(node: Node, decision: Decision): Promise<void> {
  if (!inScope(node)) return;
  const name = node.metadata?.name ?? "";
  const previous = node.status?.conditions?.find(c => c.type === EDGE_AUTONOMY_CONDITION);
  const condition = autonomyCondition(decision, previous, new Date());
  if (!condition) return;
  try {
    // Strategic merge: conditions merge by type, so the kubelet's and the controller's stay.
    await api().patchNodeStatus(
      { name, body: { status: { conditions: [condition as V1NodeCondition] } } },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    );
  } catch (error) {
    Log.info(
      { name, err: String(error) },
      "EdgeAutonomy condition write failed; the next resync retries",
    );
    return;
  }
  Log.info({ name, status: condition.status, reason: condition.reason }, "EdgeAutonomy changed");
  if (previous?.status === condition.status) return;
  if (previous === undefined && condition.status === "False") return;
  await recordEvent(
    { ...node, apiVersion: "v1", kind: "Node" },
    eventFor(condition),
    "edge-health",
  );
}

function eventFor(condition: NodeCondition) {
  return condition.status === "True"
    ? {
        type: "Normal" as const,
        reason: "EdgeAutonomyStarted",
        message: `protected from eviction: ${condition.message}`,
      }
    : {
        type: "Warning" as const,
        reason: "EdgeAutonomyEnded",
        message: `no longer protected (${condition.reason}): ${condition.message}`,
      };
}
