// Keeping a protected node's pods in a (legacy, core/v1) Endpoints object: after the endpoints
// controller moves them to `notReadyAddresses`, move the eligible ones (promotion.ts) back.
//
// The patch replaces each changed subset's two arrays whole. SuperEdge emitted, per not-ready
// address, `remove /subsets/i/notReadyAddresses/j` and `add /subsets/i/addresses/j` with the
// *original* j. JSON Patch applies ops in sequence, so after the first remove every later j points
// one slot too far: the wrong address moves, or the index is out of range; and `add` at j fails
// when `addresses` is shorter than j. A failed patch is an internal error in the API server's
// mutating dispatcher, which failurePolicy Ignore does not cover, so the endpoints controller's
// whole update was rejected. Whole arrays make the patch independent of count and order.
import { protectionByName, type ProtectionContext } from "./decision";
import { promotionVerdict, type PodLookup } from "./promotion";
import type { EndpointAddress, Endpoints, EndpointSubset, JsonPatchOp } from "./types";

export interface MovedAddress {
  subset: number;
  ip: string;
  nodeName: string;
  pod: string;
  reason: string;
}

export interface SkippedAddress {
  subset: number;
  ip: string;
  reason: string;
}

export interface EndpointsPromotion<E extends Endpoints> {
  /** A copy of the input with the moves applied; the input is not modified. */
  endpoints: E;
  moved: MovedAddress[];
  skipped: SkippedAddress[];
}

function promoteSubset(options: {
  subset: EndpointSubset;
  index: number;
  verdictOf: (address: EndpointAddress) => ReturnType<typeof promotionVerdict>;
  out: { moved: MovedAddress[]; skipped: SkippedAddress[] };
}): EndpointSubset {
  const { subset, index, verdictOf, out } = options;
  const stay: EndpointAddress[] = [];
  const move: EndpointAddress[] = [];
  for (const address of subset.notReadyAddresses ?? []) {
    const verdict = verdictOf(address);
    if (verdict.promote) {
      move.push(address);
      out.moved.push({
        subset: index,
        ip: address.ip,
        nodeName: verdict.nodeName,
        pod: verdict.pod,
        reason: verdict.reason,
      });
    } else {
      stay.push(address);
      out.skipped.push({ subset: index, ip: address.ip, reason: verdict.reason });
    }
  }
  if (move.length === 0) return subset;
  const next: EndpointSubset = { ...subset, addresses: [...(subset.addresses ?? []), ...move] };
  // The API server omits an empty list; so do we, to keep the object as the controller writes it.
  if (stay.length === 0) delete next.notReadyAddresses;
  else next.notReadyAddresses = stay;
  return next;
}

/** Moves eligible not-ready addresses of protected nodes to `addresses`. Pure. */
export function promoteEndpoints<E extends Endpoints>(options: {
  endpoints: E;
  pod: PodLookup;
  context: ProtectionContext;
}): EndpointsPromotion<E> {
  const { endpoints, pod, context } = options;
  const protection = protectionByName(context);
  const namespace = endpoints.metadata?.namespace;
  const out = { moved: [] as MovedAddress[], skipped: [] as SkippedAddress[] };
  const verdictOf = (address: EndpointAddress) =>
    promotionVerdict({ address, namespace, pod, protection });
  if (endpoints.subsets === undefined) return { endpoints, ...out };
  const subsets = endpoints.subsets.map((subset, index) =>
    promoteSubset({ subset, index, verdictOf, out }),
  );
  if (out.moved.length === 0) return { endpoints, ...out };
  return { endpoints: { ...endpoints, subsets }, ...out };
}

/**
 * The JSON Patch turning `original` into `promotion.endpoints`, or undefined when nothing moved.
 * Guarded by a resourceVersion `test` when the object has one (the reconciler's case; in admission
 * it tests the incoming object against itself and passes).
 */
export function endpointsPatch(
  original: Endpoints,
  promotion: EndpointsPromotion<Endpoints>,
): JsonPatchOp[] | undefined {
  if (promotion.moved.length === 0) return undefined;
  const ops: JsonPatchOp[] = [];
  const resourceVersion = original.metadata?.resourceVersion;
  if (resourceVersion !== undefined) {
    ops.push({ op: "test", path: "/metadata/resourceVersion", value: resourceVersion });
  }
  const changed = [...new Set(promotion.moved.map(m => m.subset))].sort((a, b) => a - b);
  for (const i of changed) {
    const subset = promotion.endpoints.subsets?.[i];
    if (subset === undefined) continue;
    // `add` on an object member creates or replaces it, so an absent `addresses` is fine too.
    ops.push({ op: "add", path: `/subsets/${i}/addresses`, value: subset.addresses ?? [] });
    if (subset.notReadyAddresses === undefined) {
      ops.push({ op: "remove", path: `/subsets/${i}/notReadyAddresses` });
    } else {
      ops.push({
        op: "replace",
        path: `/subsets/${i}/notReadyAddresses`,
        value: subset.notReadyAddresses,
      });
    }
  }
  return ops;
}
