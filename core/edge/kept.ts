// What Bulwark keeps ready, and giving it back when protection ends.
//
// The endpoint controllers write a pod of an Unknown node as not ready; promotion (promotion.ts)
// shows it ready again while the node is protected. When protection ends (the autonomy limit, a
// "false" vote, a vote gone stale) nothing makes the controllers rewrite the object: their own
// state already says "not ready" and they see no change to act on. So Bulwark records on the
// object which pods it keeps (`edge.bulwark.dev/kept-ready`: their UIDs), and the resync returns
// each one whose node is no longer protected to the controllers' view, computed from the pod as
// they compute it: serving = pod Ready, ready = serving and not terminating; a pod gone is not
// ready. Only recorded pods are touched, so a Service with publishNotReadyAddresses (ready by the
// controllers' own choice) is never changed.
import { EDGE_KEPT_READY_ANNOTATION } from "../names";
import type { ProtectionLookup, PodLookup } from "./promotion";
import {
  POD_READY,
  type EndpointConditions,
  type JsonPatchOp,
  type Meta,
  type ObjectRef,
  type Pod,
} from "./types";

/** The key a kept pod is recorded by: its UID, else its name (a targetRef without uid). */
export function keptKey(ref: ObjectRef | undefined): string | undefined {
  if (ref?.kind !== "Pod") return undefined;
  return ref.uid ?? (ref.name === undefined ? undefined : `name:${ref.name}`);
}

/** The pods the object records as kept ready. */
export function keptOf(meta: Meta | undefined): Set<string> {
  const raw = meta?.annotations?.[EDGE_KEPT_READY_ANNOTATION] ?? "";
  return new Set(raw.split(",").filter(Boolean));
}

/** The annotation's value for `kept` (sorted: the same set is the same string). */
export function keptValue(kept: ReadonlySet<string>): string {
  return [...kept].sort().join(",");
}

export type Restore =
  | { restore: false }
  | {
      restore: true;
      conditions: Required<Pick<EndpointConditions, "ready" | "serving">>;
      reason: string;
    };

/** The live pod a ref points at: same name, and the same UID when the ref has one. */
function livePod(ref: ObjectRef | undefined, namespace: string | undefined, pod: PodLookup) {
  const ns = ref?.namespace ?? namespace;
  if (ref?.name === undefined || ns === undefined) return undefined;
  const found = pod(ns, ref.name);
  if (found === undefined) return undefined;
  return ref.uid === undefined || found.metadata?.uid === ref.uid ? found : undefined;
}

/** The endpoint's conditions as the controllers compute them from the pod. */
function controllersView(pod: Pod): { ready: boolean; serving: boolean } {
  const serving =
    pod.status?.conditions?.some(c => c.type === POD_READY && c.status === "True") ?? false;
  return { ready: serving && pod.metadata?.deletionTimestamp === undefined, serving };
}

/**
 * Whether a kept endpoint goes back to the controllers' view: when its node (the address's, else
 * the pod's) is not protected now. Its conditions are then those the controllers would write.
 */
export function restoreVerdict(options: {
  ref: ObjectRef | undefined;
  nodeName: string | undefined;
  namespace: string | undefined;
  pod: PodLookup;
  protection: ProtectionLookup;
}): Restore {
  const pod = livePod(options.ref, options.namespace, options.pod);
  const nodeName = options.nodeName ?? pod?.spec?.nodeName;
  const entry = nodeName === undefined ? undefined : options.protection(nodeName);
  if (entry?.decision.protect) return { restore: false };
  if (pod === undefined) {
    return {
      restore: true,
      conditions: { ready: false, serving: false },
      reason: "the pod is gone",
    };
  }
  const why = entry ? `: ${entry.decision.reason}` : "";
  return {
    restore: true,
    conditions: controllersView(pod),
    reason: `node ${nodeName ?? "(none)"} is no longer protected${why}`,
  };
}

/** The JSON Patch op that writes `kept` onto an object whose metadata was `meta`, if it changed. */
export function keptPatch(meta: Meta | undefined, kept: ReadonlySet<string>): JsonPatchOp[] {
  const before = meta?.annotations?.[EDGE_KEPT_READY_ANNOTATION];
  const after = kept.size === 0 ? undefined : keptValue(kept);
  if (before === after) return [];
  const path = `/metadata/annotations/${EDGE_KEPT_READY_ANNOTATION.replace(/~/g, "~0").replace(/\//g, "~1")}`;
  if (after === undefined) return [{ op: "remove", path }];
  if (meta?.annotations === undefined) {
    return [
      { op: "add", path: "/metadata/annotations", value: { [EDGE_KEPT_READY_ANNOTATION]: after } },
    ];
  }
  return [{ op: "add", path, value: after }];
}

/** `meta` with the kept annotation set to `kept` (removed when empty). */
export function withKept<M extends Meta>(meta: M | undefined, kept: ReadonlySet<string>): M {
  const annotations = { ...meta?.annotations };
  if (kept.size === 0) delete annotations[EDGE_KEPT_READY_ANNOTATION];
  else annotations[EDGE_KEPT_READY_ANNOTATION] = keptValue(kept);
  return { ...(meta as M), annotations };
}
