// The NoExecute unreachable taint of a protected node: stripped from the update in admission, and
// removed by the reconciler when it slipped through (the webhook fails open).
import { Log, type PeprMutateRequest, type a } from "pepr";
import {
  stripUnreachableNoExecute,
  taintRemovalPatch,
  type Decision,
  type Node,
} from "../../core/edge";
import { NODES, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { recordEvent } from "../pepr/events";
import type { Protection } from "./protection";

export function stripTaintOnUpdate(protection: Protection) {
  return function stripTaintOnUpdate(req: PeprMutateRequest<a.Node>): void {
    const node = req.Raw as Node;
    const { taints, removed } = stripUnreachableNoExecute(node.spec?.taints);
    if (!removed) return;
    const decision = protection.decide(node);
    if (!decision.protect) return;
    req.Raw.spec = {
      ...req.Raw.spec,
      taints: taints as a.Node["spec"] extends { taints?: infer T } ? T : never,
    };
    Log.info(
      { name: node.metadata?.name, reason: decision.reason },
      "kept the unreachable NoExecute taint off a voted-healthy node",
    );
  };
}

/** Level-triggered: removes the taint from any protected node that has it. */
export async function reconcileNodeTaint(
  protection: Protection,
  node: Node,
  decision: Decision = protection.decide(node),
): Promise<void> {
  const patch = taintRemovalPatch(node);
  if (!patch) return;
  if (!decision.protect) return;
  const name = node.metadata?.name ?? "";
  try {
    await keptAliveApi().jsonPatch(resourcePath(NODES, { name }), patch);
  } catch (error) {
    // A conflict means the node moved on: the next event or resync decides again.
    Log.info(
      { name, err: String(error) },
      "taint removal conflicted; will retry on the next event",
    );
    return;
  }
  Log.info(
    { name, reason: decision.reason },
    "removed the unreachable NoExecute taint from a voted-healthy node",
  );
  await recordEvent(
    { ...node, apiVersion: "v1", kind: "Node" },
    {
      type: "Normal",
      reason: "EvictionPrevented",
      message: `removed node.kubernetes.io/unreachable:NoExecute: ${decision.reason}`,
    },
    "edge-health",
  );
}
