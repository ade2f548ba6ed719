// Endpoints and EndpointSlices of pods on protected nodes: the endpoint controllers mark them not
// ready when the node goes Unknown; admission puts back the ones that were ready, the resync
// repairs what the fail-open webhook missed (and what was not a candidate yet when the object was
// written, e.g. a node voted healthy after its pods went not ready), and gives kept pods back to
// the controllers' view when protection ends. All lookups come from watch caches.
import { Log, type PeprMutateRequest, type a } from "pepr";
import { ENDPOINTS, ENDPOINT_SLICES, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import {
  endpointSlicePatch,
  endpointsPatch,
  keptOf,
  settleEndpointSlice,
  settleEndpoints,
  type EndpointSlice,
  type Endpoints,
} from "../../core/edge";
import type { Protection } from "./protection";
import { moduleWatchCache } from "../pepr/watches";

export function settleEndpointsObject(protection: Protection, endpoints: Endpoints) {
  return settleEndpoints({ endpoints, pod: protection.pod, context: protection.context() });
}

export function settleSliceObject(protection: Protection, slice: EndpointSlice) {
  return settleEndpointSlice({ slice, pod: protection.pod, context: protection.context() });
}

export function promoteEndpointsOnWrite(protection: Protection) {
  return function promoteEndpointsOnWrite(req: PeprMutateRequest<a.Endpoints>): void {
    const original = req.Raw as Endpoints;
    const result = settleEndpointsObject(protection, original);
    if (!endpointsPatch(original, result)) return;
    req.Raw.subsets = result.endpoints.subsets as a.Endpoints["subsets"];
    req.Raw.metadata = { ...req.Raw.metadata, annotations: result.endpoints.metadata?.annotations };
    Log.info(
      {
        ns: req.Raw.metadata.namespace,
        name: req.Raw.metadata.name,
        kept: result.moved.length,
        restored: result.restored?.length ?? 0,
      },
      "endpoints of voted-healthy nodes kept ready",
    );
  };
}

export function promoteSliceOnWrite(protection: Protection) {
  return function promoteSliceOnWrite(req: PeprMutateRequest<a.EndpointSlice>): void {
    const original = req.Raw as EndpointSlice;
    const result = settleSliceObject(protection, original);
    if (!endpointSlicePatch(original, result)) return;
    req.Raw.endpoints = result.slice.endpoints as a.EndpointSlice["endpoints"];
    req.Raw.metadata = { ...req.Raw.metadata, annotations: result.slice.metadata?.annotations };
    Log.info(
      {
        ns: req.Raw.metadata.namespace,
        name: req.Raw.metadata.name,
        promoted: result.promoted.length,
        restored: result.restored?.length ?? 0,
      },
      "EndpointSlice endpoints of voted-healthy nodes kept ready",
    );
  };
}

/** Reconciler for one Endpoints object: patch what admission did not get to (it fails open). */
export async function reconcileEndpoints(
  protection: Protection,
  endpoints: Endpoints,
): Promise<void> {
  const result = settleEndpointsObject(protection, endpoints);
  const patch = endpointsPatch(endpoints, result);
  if (!patch) return;
  const { namespace, name } = endpoints.metadata ?? {};
  await keptAliveApi()
    .jsonPatch(resourcePath(ENDPOINTS, { namespace, name }), patch)
    .then(() =>
      Log.info(
        { ns: namespace, name, kept: result.moved.length, restored: result.restored?.length ?? 0 },
        "endpoints repaired",
      ),
    )
    .catch(error =>
      Log.info(
        { ns: namespace, name, err: String(error) },
        "endpoints repair conflicted; the next resync retries",
      ),
    );
}

export async function reconcileSlice(protection: Protection, slice: EndpointSlice): Promise<void> {
  const result = settleSliceObject(protection, slice);
  const patch = endpointSlicePatch(slice, result);
  if (!patch) return;
  const { namespace, name } = slice.metadata ?? {};
  await keptAliveApi()
    .jsonPatch(resourcePath(ENDPOINT_SLICES, { namespace, name }), patch)
    .then(() =>
      Log.info(
        {
          ns: namespace,
          name,
          promoted: result.promoted.length,
          restored: result.restored?.length ?? 0,
        },
        "EndpointSlice repaired",
      ),
    )
    .catch(error =>
      Log.info(
        { ns: namespace, name, err: String(error) },
        "EndpointSlice repair conflicted; the next resync retries",
      ),
    );
}

/** Whether the object has something the resync may change: a not-ready endpoint or a record. */
const sliceHasWork = (slice: EndpointSlice): boolean =>
  keptOf(slice.metadata).size > 0 ||
  (slice.endpoints ?? []).some(e => e.conditions?.ready === false);
const endpointsHaveWork = (endpoints: Endpoints): boolean =>
  keptOf(endpoints.metadata).size > 0 ||
  (endpoints.subsets ?? []).some(s => (s.notReadyAddresses ?? []).length > 0);

/** The watcher's periodic repair of every Endpoints and EndpointSlice, from caches. */
export class EndpointResync {
  readonly slices = moduleWatchCache<EndpointSlice>({
    path: resourcePath(ENDPOINT_SLICES),
    what: "endpointslices",
  });
  readonly endpoints = moduleWatchCache<Endpoints>({
    path: resourcePath(ENDPOINTS),
    what: "endpoints",
  });

  constructor(readonly protection: Protection) {}

  start(): void {
    this.slices.start();
    this.endpoints.start();
  }

  /** One pass: only objects with a not-ready endpoint or a kept record cost a decision. */
  async run(): Promise<{ slices: number; endpoints: number }> {
    const slices = this.slices.all().filter(sliceHasWork);
    const endpoints = this.endpoints.all().filter(endpointsHaveWork);
    for (const slice of slices) await reconcileSlice(this.protection, slice);
    for (const object of endpoints) await reconcileEndpoints(this.protection, object);
    return { slices: slices.length, endpoints: endpoints.length };
  }

  /** Endpoints kept ready now, by the records on the cached objects: for the metrics. */
  keptCount(): number {
    return this.slices.all().reduce((n, s) => n + keptOf(s.metadata).size, 0);
  }
}
