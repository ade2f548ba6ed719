// Keeping a protected node's pods ready in EndpointSlices (what kube-proxy actually reads): set
// `conditions.ready` and `conditions.serving` back to true for eligible endpoints (promotion.ts).
// SuperEdge never handled slices. Terminating endpoints are left alone: the pod is going away,
// and kube-proxy already falls back to serving+terminating endpoints when nothing else is ready.
//
// The patch replaces each promoted endpoint's `conditions` by index. That is safe here, unlike
// SuperEdge's Endpoints patch, because no element is added or removed, so no index shifts.
import { protectionByName, type ProtectionContext } from "./decision";
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
  const endpoints = slice.endpoints.map((endpoint, index) => {
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
 * The JSON Patch turning `original` into `promotion.slice`, or undefined when nothing changed:
 * a resourceVersion `test` when known, then one `replace` of each promoted endpoint's conditions.
 */
export function endpointSlicePatch(
  original: EndpointSlice,
  promotion: SlicePromotion<EndpointSlice>,
): JsonPatchOp[] | undefined {
  if (promotion.promoted.length === 0) return undefined;
  const ops: JsonPatchOp[] = [];
  const resourceVersion = original.metadata?.resourceVersion;
  if (resourceVersion !== undefined) {
    ops.push({ op: "test", path: "/metadata/resourceVersion", value: resourceVersion });
  }
  for (const { index } of promotion.promoted) {
    const conditions = promotion.slice.endpoints[index]?.conditions;
    if (conditions === undefined) continue;
    ops.push({ op: "replace", path: `/endpoints/${index}/conditions`, value: conditions });
  }
  return ops;
}
