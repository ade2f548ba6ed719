import { Counter, Gauge, Histogram } from "prom-client";
import { registry } from "../pepr/metrics";

export const guardMetrics = {
  consistent: new Gauge({
    name: "bulwark_checksum_consistent",
    help: "1 when the cluster's objects of this kind match a published checksum object, 0 when none matches",
    labelNames: ["kind"],
    registers: [registry],
  }),
  mismatches: new Counter({
    name: "bulwark_checksum_mismatches_total",
    help: "Times a checksum object turned inconsistent with the cluster",
    labelNames: ["kind"],
    registers: [registry],
  }),
  wouldRefuse: new Gauge({
    name: "bulwark_checksum_would_refuse",
    help: "Observe mode: 1 while enforcing would refuse the kind's objects (no published checksum object matches, or none is published)",
    labelNames: ["kind"],
    registers: [registry],
  }),
  untrustedChecksums: new Gauge({
    name: "bulwark_checksum_untrusted_objects",
    help: "Checksum objects outside the publisher namespaces, ignored (an Event on each says so)",
    registers: [registry],
  }),
  refusedIngresses: new Gauge({
    name: "bulwark_ingresses_refused",
    help: "Bulwark's Ingresses that fail its review, so the gateway does not serve them (an Event on each says why)",
    registers: [registry],
  }),
  verifyDuration: new Histogram({
    name: "bulwark_checksum_verify_duration_seconds",
    help: "Time to verify the checksum objects of one kind against the cluster",
    labelNames: ["kind"],
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  }),
};
