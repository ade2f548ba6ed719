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
import { keptKey, keptOf, keptPatch, restoreVerdict, withKept } from "./kept";
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
  /** Kept addresses returned to `notReadyAddresses` (settleEndpoints only). */
  restored?: SkippedAddress[];
  /** The pods kept ready after this change (settleEndpoints only; kept.ts). */
  kept?: ReadonlySet<string>;
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
 * Promotion, then the record of what is kept (kept.ts): kept addresses whose node is no longer
 * protected and whose pod is not ready go back to `notReadyAddresses`, and the record becomes
 * exactly the addresses kept ready now. Pure.
 */
export function settleEndpoints<E extends Endpoints>(options: {
  endpoints: E;
  pod: PodLookup;
  context: ProtectionContext;
}): EndpointsPromotion<E> {
  const promotion = promoteEndpoints(options);
  const protection = protectionByName(options.context);
  const before = keptOf(options.endpoints.metadata);
  const namespace = options.endpoints.metadata?.namespace;
  const movedNow = new Set(promotion.moved.map(m => `${m.subset}/${m.ip}`));
  const kept = new Set<string>();
  const restored: SkippedAddress[] = [];
  const subsets = promotion.endpoints.subsets?.map((subset, index) => {
    const stay: EndpointAddress[] = [];
    const back: EndpointAddress[] = [];
    for (const address of subset.addresses ?? []) {
      const key = keptKey(address.targetRef);
      if (key !== undefined && movedNow.has(`${index}/${address.ip}`)) kept.add(key);
      else if (key !== undefined && before.has(key)) {
        const verdict = restoreVerdict({
          ref: address.targetRef,
          nodeName: address.nodeName,
          namespace,
          pod: options.pod,
          protection,
        });
        if (!verdict.restore) kept.add(key);
        else if (!verdict.conditions.ready) {
          back.push(address);
          restored.push({ subset: index, ip: address.ip, reason: verdict.reason });
          continue;
        }
      }
      stay.push(address);
    }
    if (back.length === 0) return subset;
    const next: EndpointSubset = {
      ...subset,
      notReadyAddresses: [...(subset.notReadyAddresses ?? []), ...back],
    };
    if (stay.length === 0) delete next.addresses;
    else next.addresses = stay;
    return next;
  });
  const metadata = withKept(promotion.endpoints.metadata, kept);
  return {
    ...promotion,
    endpoints: { ...promotion.endpoints, metadata, ...(subsets ? { subsets } : {}) },
    restored,
    kept,
  };
}

/**
 * The JSON Patch turning `original` into `promotion.endpoints`, or undefined when nothing changed.
 * Guarded by a resourceVersion `test` when the object has one (the reconciler's case; in admission
 * it tests the incoming object against itself and passes).
 */
export function endpointsPatch(
  original: Endpoints,
  promotion: EndpointsPromotion<Endpoints>,
): JsonPatchOp[] | undefined {
  const changedSubsets = [...promotion.moved, ...(promotion.restored ?? [])].map(m => m.subset);
  const record = promotion.kept ? keptPatch(original.metadata, promotion.kept) : [];
  if (changedSubsets.length === 0 && record.length === 0) return undefined;
  const ops: JsonPatchOp[] = [];
  const resourceVersion = original.metadata?.resourceVersion;
  if (resourceVersion !== undefined) {
    ops.push({ op: "test", path: "/metadata/resourceVersion", value: resourceVersion });
  }
  const changed = [...new Set(changedSubsets)].sort((a, b) => a - b);
  for (const i of changed)
    ops.push(...subsetOps(original.subsets?.[i], promotion.endpoints.subsets?.[i], i));
  return [...ops, ...record];
}

/** Both address lists of subset `i` whole: `add` creates or replaces; a list now empty goes. */
function subsetOps(
  before: EndpointSubset | undefined,
  after: EndpointSubset | undefined,
  i: number,
): JsonPatchOp[] {
  if (after === undefined) return [];
  const ops: JsonPatchOp[] = [];
  for (const key of ["addresses", "notReadyAddresses"] as const) {
    if (after[key] !== undefined)
      ops.push({ op: "add", path: `/subsets/${i}/${key}`, value: after[key] });
    else if (before?.[key] !== undefined) ops.push({ op: "remove", path: `/subsets/${i}/${key}` });
  }
  return ops;
}
