// Keeping a protected node's pods ready in EndpointSlices (what kube-proxy actually reads): set
// `conditions.ready` and `conditions.serving` back to true for eligible endpoints (promotion.ts).
// SuperEdge never handled slices. Terminating endpoints are left alone: the pod is going away,
// and kube-proxy already falls back to serving+terminating endpoints when nothing else is ready.
//
// The patch replaces each promoted endpoint's `conditions` by index. That is safe here, unlike
// SuperEdge's Endpoints patch, because no element is added or removed, so no index shifts.
import { protectionByName, type ProtectionContext } from "./decision";
import { keptKey, keptOf, keptPatch, restoreVerdict, withKept } from "./kept";
import { promotionVerdict, type PodLookup } from "./promotion";
import type { EndpointSlice, JsonPatchOp, SliceEndpoint } from "./types";

export interface PromotedEndpoint {
  index: number;
  addresses: readonly string[];
  nodeName: string;
  pod: string;
  reason: string;
}

export interface SkippedEndpoint {
  index: number;
  addresses: readonly string[];
  reason: string;
}

export interface SlicePromotion<S extends EndpointSlice> {
  /** A copy of the input with the promotions applied; the input is not modified. */
  slice: S;
  promoted: PromotedEndpoint[];
  skipped: SkippedEndpoint[];
  /** Kept endpoints returned to the controllers' view (settleEndpointSlice only). */
  restored?: RestoredEndpoint[];
  /** The pods kept ready after this change (settleEndpointSlice only; kept.ts). */
  kept?: ReadonlySet<string>;
}

export interface RestoredEndpoint {
  index: number;
  addresses: readonly string[];
  reason: string;
}

/** An endpoint the slice controller marked not ready and not terminating: a candidate. */
function isCandidate(endpoint: SliceEndpoint): boolean {
  // `ready` absent means "unknown, treat as ready" (discovery/v1), so only an explicit false counts.
  return endpoint.conditions?.ready === false && endpoint.conditions.terminating !== true;
}

/** Marks eligible not-ready endpoints of protected nodes ready and serving. Pure. */
export function promoteEndpointSlice<S extends EndpointSlice>(options: {
  slice: S;
  pod: PodLookup;
  context: ProtectionContext;
}): SlicePromotion<S> {
  const { slice, pod, context } = options;
  const protection = protectionByName(context);
  const namespace = slice.metadata?.namespace;
  const promoted: PromotedEndpoint[] = [];
  const skipped: SkippedEndpoint[] = [];
  const endpoints = (slice.endpoints ?? []).map((endpoint, index) => {
    if (!isCandidate(endpoint)) return endpoint;
    const verdict = promotionVerdict({ address: endpoint, namespace, pod, protection });
    const addresses = endpoint.addresses;
    if (!verdict.promote) {
      skipped.push({ index, addresses, reason: verdict.reason });
      return endpoint;
    }
    promoted.push({
      index,
      addresses,
      nodeName: verdict.nodeName,
      pod: verdict.pod,
      reason: verdict.reason,
    });
    return { ...endpoint, conditions: { ...endpoint.conditions, ready: true, serving: true } };
  });
  if (promoted.length === 0) return { slice, promoted, skipped };
  return { slice: { ...slice, endpoints }, promoted, skipped };
}

/**
 * Promotion, then the record of what is kept (kept.ts): kept endpoints whose node is no longer
 * protected go back to the controllers' view, and the record becomes exactly the endpoints kept
 * ready now. What admission applies to a write and the resync to a stored slice. Pure.
 */
export function settleEndpointSlice<S extends EndpointSlice>(options: {
  slice: S;
  pod: PodLookup;
  context: ProtectionContext;
}): SlicePromotion<S> {
  const promotion = promoteEndpointSlice(options);
  const protection = protectionByName(options.context);
  const before = keptOf(options.slice.metadata);
  const promotedNow = new Set(promotion.promoted.map(p => p.index));
  const kept = new Set<string>();
  const restored: RestoredEndpoint[] = [];
  const list = promotion.slice.endpoints;
  // A slice without endpoints keeps its null: only the kept record can change on it.
  const endpoints = list?.map((endpoint, index) => {
    const key = keptKey(endpoint.targetRef);
    if (key === undefined) return endpoint;
    if (promotedNow.has(index)) {
      kept.add(key);
      return endpoint;
    }
    if (!before.has(key) || endpoint.conditions?.ready !== true) return endpoint;
    const verdict = restoreVerdict({
      ref: endpoint.targetRef,
      nodeName: endpoint.nodeName,
      namespace: options.slice.metadata?.namespace,
      pod: options.pod,
      protection,
    });
    if (!verdict.restore) {
      kept.add(key);
      return endpoint;
    }
    restored.push({ index, addresses: endpoint.addresses, reason: verdict.reason });
    return { ...endpoint, conditions: { ...endpoint.conditions, ...verdict.conditions } };
  });
  const metadata = withKept(promotion.slice.metadata, kept);
  return {
    ...promotion,
    slice: { ...promotion.slice, metadata, endpoints: endpoints ?? list },
    restored,
    kept,
  };
}

/**
 * The JSON Patch turning `original` into `promotion.slice`, or undefined when nothing changed:
 * a resourceVersion `test` when known, one `replace` of each changed endpoint's conditions, and
 * the kept record when it changed.
 */
export function endpointSlicePatch(
  original: EndpointSlice,
  promotion: SlicePromotion<EndpointSlice>,
): JsonPatchOp[] | undefined {
  const changed = [...promotion.promoted, ...(promotion.restored ?? [])].map(e => e.index);
  const record = promotion.kept ? keptPatch(original.metadata, promotion.kept) : [];
  if (changed.length === 0 && record.length === 0) return undefined;
  const ops: JsonPatchOp[] = [];
  const resourceVersion = original.metadata?.resourceVersion;
  if (resourceVersion !== undefined) {
    ops.push({ op: "test", path: "/metadata/resourceVersion", value: resourceVersion });
  }
  for (const index of changed.sort((a, b) => a - b)) {
    const conditions = promotion.slice.endpoints?.[index]?.conditions;
    if (conditions === undefined) continue;
    ops.push({ op: "replace", path: `/endpoints/${index}/conditions`, value: conditions });
  }
  return [...ops, ...record];
}
