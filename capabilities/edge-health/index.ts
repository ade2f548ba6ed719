import { Capability } from "pepr";

// Bindings arrive with the edge-health issue: node taint and endpoint admission, reconciler.
export const EdgeHealth = new Capability({
  name: "edge-health",
  description:
    "Keeps nodes that their peers vote healthy from being evicted while cut off from the cloud.",
});
