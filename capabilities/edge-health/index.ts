import { Capability, a } from "pepr";
import type { EndpointSlice, Endpoints, Node } from "../../core/edge";
import {
  promoteEndpointsOnWrite,
  promoteSliceOnWrite,
  reconcileEndpoints,
  reconcileSlice,
} from "./endpoints";
import { NodeCache } from "./node-cache";
import { loadEdgeSettings, Protection } from "./protection";
import { reconcileNodeTaint, stripTaintOnUpdate } from "./taints";
import { isWatcherProcess } from "../../kube/runtime";

export const EdgeHealth = new Capability({
  name: "edge-health",
  description:
    "Keeps nodes that their peers vote healthy from being evicted while cut off from the cloud.",
});

const { When } = EdgeHealth;
const settings = loadEdgeSettings();
const nodes = new NodeCache();
const protection = new Protection(nodes, settings);

// UPDATE covers the node-lifecycle controller's PATCH that adds the taint.
When(a.Node).IsUpdated().Mutate(stripTaintOnUpdate(protection));
When(a.Node)
  .IsCreatedOrUpdated()
  .Watch(node => reconcileNodeTaint(protection, node as Node));

When(a.Endpoints).IsCreatedOrUpdated().Mutate(promoteEndpointsOnWrite(protection));
When(a.EndpointSlice).IsCreatedOrUpdated().Mutate(promoteSliceOnWrite(protection));
When(a.Endpoints)
  .IsCreatedOrUpdated()
  .Watch(endpoints => reconcileEndpoints(protection, endpoints as Endpoints));
When(a.EndpointSlice)
  .IsCreatedOrUpdated()
  .Watch(slice => reconcileSlice(protection, slice as EndpointSlice));

if (process.env.PEPR_MODE !== "build") {
  nodes.start(settings.resyncMs);
  void protection.refreshZoneConfig();
  setInterval(() => void protection.refreshZoneConfig(), settings.resyncMs).unref();
}
if (isWatcherProcess()) {
  // The resync repairs what a missed event left: every protected node that still has the taint.
  setInterval(
    () => nodes.all().forEach(node => void reconcileNodeTaint(protection, node as Node)),
    settings.resyncMs,
  ).unref();
}
