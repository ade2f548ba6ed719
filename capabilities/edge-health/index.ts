import { Capability, a } from "pepr";
import type { Node } from "../../core/edge";
import { isWatcherProcess } from "../pepr/process";
import {
  EndpointResync,
  promoteEndpointsOnWrite,
  promoteSliceOnWrite,
  reconcileEndpoints,
  reconcileSlice,
} from "./endpoints";
import { failOpenMutation } from "../pepr/fail-open";
import { edgeMetrics } from "./metrics";
import { inScope, reconcileNodeAutonomy } from "./node-status";
import { Protection } from "./protection";
import { loadEdgeSettings } from "./settings";
import { reconcileNodeTaint, stripTaintOnUpdate } from "./taints";

export const EdgeHealth = new Capability({
  name: "edge-health",
  description:
    "Keeps nodes that their peers vote healthy from being evicted while cut off from the cloud.",
});

const { When } = EdgeHealth;
const settings = loadEdgeSettings();
const protection = new Protection(settings);

// UPDATE covers the node-lifecycle controller's PATCH that adds the taint.
When(a.Node)
  .IsUpdated()
  .Mutate(failOpenMutation(stripTaintOnUpdate(protection)));

When(a.Endpoints)
  .IsCreatedOrUpdated()
  .Mutate(failOpenMutation(promoteEndpointsOnWrite(protection)));
When(a.EndpointSlice)
  .IsCreatedOrUpdated()
  .Mutate(failOpenMutation(promoteSliceOnWrite(protection)));

async function reconcileNode(node: Node, decision = protection.decide(node)): Promise<void> {
  await reconcileNodeTaint(protection, node, decision);
  await reconcileNodeAutonomy(node, decision);
}

// The watcher reconciles on the events of the caches' own watches (not Pepr Watch bindings: those
// opened a second watch per kind, keeping every object whole once more; kube/list-watch.ts).
const endpoints = isWatcherProcess() ? new EndpointResync(protection) : undefined;
if (endpoints) {
  protection.nodes.follow((node, deleted) => (deleted ? undefined : reconcileNode(node)));
  endpoints.endpoints.follow((object, deleted) =>
    deleted ? undefined : reconcileEndpoints(protection, object),
  );
  endpoints.slices.follow((slice, deleted) =>
    deleted ? undefined : reconcileSlice(protection, slice),
  );
}
if (process.env.PEPR_MODE !== "build") protection.start();
if (endpoints) {
  // The resync repairs what a missed event left, and ends what ran out (a term, a limit): the
  // taint and condition of every node, then every Endpoints and EndpointSlice with something to do.
  endpoints.start();
  let running = false;
  setInterval(() => {
    if (running) return;
    running = true;
    void resync(endpoints).finally(() => (running = false));
  }, settings.resyncMs).unref();
}

async function resync(endpoints: EndpointResync): Promise<void> {
  const byRule = new Map<string, number>();
  for (const node of protection.nodes.all()) {
    const decision = protection.decide(node);
    if (inScope(node)) byRule.set(decision.rule, (byRule.get(decision.rule) ?? 0) + 1);
    await reconcileNode(node, decision);
  }
  edgeMetrics.nodes.reset();
  for (const [rule, count] of byRule) edgeMetrics.nodes.set({ rule }, count);
  edgeMetrics.protectedNodes.set(byRule.get("protected") ?? 0);
  await endpoints.run();
  edgeMetrics.keptEndpoints.set(endpoints.keptCount());
}
