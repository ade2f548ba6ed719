// Endpoints and EndpointSlices of pods on protected nodes: the endpoint controllers mark them not
// ready when the node goes Unknown; admission puts back the ones that were ready, and the
// reconciler repairs what the fail-open webhook missed.
import { K8s, Log, kind, type PeprMutateRequest, type a } from "pepr";
import {
  endpointSlicePatch,
  endpointsPatch,
  promoteEndpointSlice,
  promoteEndpoints,
  type EndpointSlice,
  type Endpoints,
  type Pod,
  type ProtectionContext,
} from "../../core/edge";
import type { Protection } from "./protection";

interface Candidate {
  nodeName?: string;
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

/**
 * The pods behind not-ready addresses on protected nodes, fetched once each: promotion is pure
 * and needs them at hand. Addresses on unprotected nodes cost nothing.
 */
async function podsOf(
  candidates: Candidate[],
  namespace: string,
  ctx: ProtectionContext,
  protection: Protection,
) {
  const pods = new Map<string, Pod>();
  const wanted = candidates.filter(c => {
    const node = c.nodeName ? ctx.node(c.nodeName) : undefined;
    return (
      c.targetRef?.kind === "Pod" &&
      c.targetRef.name &&
      node &&
      protection.decide(node, ctx.now).protect
    );
  });
  await Promise.all(
    wanted.map(async c => {
      const ns = c.targetRef?.namespace ?? namespace;
      const name = c.targetRef?.name ?? "";
      try {
        pods.set(`${ns}/${name}`, (await K8s(kind.Pod).InNamespace(ns).Get(name)) as Pod);
      } catch {
        // A pod that cannot be read is not promoted: promotion needs its readiness history.
      }
    }),
  );
  return (ns: string, name: string) => pods.get(`${ns}/${name}`);
}

export async function promoteEndpointsObject(protection: Protection, endpoints: Endpoints) {
  const ctx = protection.context();
  const candidates = (endpoints.subsets ?? []).flatMap(s => s.notReadyAddresses ?? []);
  const pod = await podsOf(candidates, endpoints.metadata?.namespace ?? "", ctx, protection);
  return promoteEndpoints({ endpoints, pod, context: ctx });
}

export async function promoteSliceObject(protection: Protection, slice: EndpointSlice) {
  const ctx = protection.context();
  const candidates = (slice.endpoints ?? []).filter(e => e.conditions?.ready === false);
  const pod = await podsOf(candidates, slice.metadata?.namespace ?? "", ctx, protection);
  return promoteEndpointSlice({ slice, pod, context: ctx });
}

export function promoteEndpointsOnWrite(protection: Protection) {
  return async function promoteEndpointsOnWrite(
    req: PeprMutateRequest<a.Endpoints>,
  ): Promise<void> {
    const result = await promoteEndpointsObject(protection, req.Raw as Endpoints);
    if (result.moved.length === 0) return;
    req.Raw.subsets = result.endpoints.subsets as a.Endpoints["subsets"];
    Log.info(
      { ns: req.Raw.metadata?.namespace, name: req.Raw.metadata?.name, moved: result.moved.length },
      "kept ready endpoints of a voted-healthy node",
    );
  };
}

export function promoteSliceOnWrite(protection: Protection) {
  return async function promoteSliceOnWrite(
    req: PeprMutateRequest<a.EndpointSlice>,
  ): Promise<void> {
    const result = await promoteSliceObject(protection, req.Raw as EndpointSlice);
    if (result.promoted.length === 0) return;
    req.Raw.endpoints = result.slice.endpoints as a.EndpointSlice["endpoints"];
    Log.info(
      {
        ns: req.Raw.metadata?.namespace,
        name: req.Raw.metadata?.name,
        promoted: result.promoted.length,
      },
      "kept ready EndpointSlice endpoints of a voted-healthy node",
    );
  };
}

/** Reconciler: patch what the webhook did not get to (it fails open). */
export async function reconcileEndpoints(
  protection: Protection,
  endpoints: Endpoints,
): Promise<void> {
  const patch = endpointsPatch(endpoints, await promoteEndpointsObject(protection, endpoints));
  if (!patch) return;
  const { namespace, name } = endpoints.metadata ?? {};
  await K8s(kind.Endpoints, { namespace, name })
    .Patch(patch)
    .catch(error =>
      Log.info(
        { ns: namespace, name, err: String(error) },
        "endpoints repair conflicted; the next event retries",
      ),
    );
}

export async function reconcileSlice(protection: Protection, slice: EndpointSlice): Promise<void> {
  const patch = endpointSlicePatch(slice, await promoteSliceObject(protection, slice));
  if (!patch) return;
  const { namespace, name } = slice.metadata ?? {};
  await K8s(kind.EndpointSlice, { namespace, name })
    .Patch(patch)
    .catch(error =>
      Log.info(
        { ns: namespace, name, err: String(error) },
        "EndpointSlice repair conflicted; the next event retries",
      ),
    );
}
