import { Gauge } from "prom-client";
import { registry } from "../pepr/metrics";

export const edgeMetrics = {
  nodes: new Gauge({
    name: "bulwark_edge_nodes",
    help: "Edge nodes by the row of the protection table that applies (rule: protected, vote-stale, over-limit, opted-out, ...)",
    labelNames: ["rule"],
    registers: [registry],
  }),
  protectedNodes: new Gauge({
    name: "bulwark_edge_protected_nodes",
    help: "Nodes kept from eviction now: Unknown, voted healthy within the vote's term, under the autonomy limit",
    registers: [registry],
  }),
  keptEndpoints: new Gauge({
    name: "bulwark_edge_kept_endpoints",
    help: "EndpointSlice endpoints Bulwark keeps ready on protected nodes (by the records on the slices)",
    registers: [registry],
  }),
};
