// The gateway's control-side metrics, on a registry of its own (served on the admin port).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function gatewayMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "bulwark_gateway_" });
  const labelNames = ["kind"] as const;
  return {
    registry,
    viewVersion: new Gauge({
      name: "bulwark_gateway_view_version",
      help: "Version of the view the data plane serves",
      registers: [registry],
    }),
    lastGoodTimestamp: new Gauge({
      name: "bulwark_gateway_last_good_timestamp_seconds",
      help: "When the view served now became good (Unix time)",
      registers: [registry],
    }),
    viewsApplied: new Counter({
      name: "bulwark_gateway_views_applied_total",
      help: "Views handed to the data plane and served",
      registers: [registry],
    }),
    applyDuration: new Histogram({
      name: "bulwark_gateway_view_apply_duration_seconds",
      help: "From a change being seen to the data plane serving it",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    checksumMismatch: new Gauge({
      name: "bulwark_gateway_checksum_mismatch",
      help: "1 while the latest objects of the kind match no checksum object (enforce: the last good ones serve; observe: the latest serve anyway)",
      labelNames,
      registers: [registry],
    }),
    checksumWouldRefuse: new Gauge({
      name: "bulwark_gateway_checksum_would_refuse",
      help: "Observe mode: 1 while enforcing would refuse the latest objects of the kind (no matching or no published checksum object)",
      labelNames,
      registers: [registry],
    }),
    checksumMismatches: new Counter({
      name: "bulwark_gateway_checksum_mismatches_total",
      help: "Candidate updates refused because their checksum matched no checksum object",
      labelNames,
      registers: [registry],
    }),
    checksumSuccesses: new Counter({
      name: "bulwark_gateway_checksum_successes_total",
      help: "Candidate updates whose checksum matched a checksum object",
      labelNames,
      registers: [registry],
    }),
    emptyRefusals: new Counter({
      name: "bulwark_gateway_empty_refusals_total",
      help: "Candidate updates refused because they would replace a non-empty set with an empty one",
      labelNames,
      registers: [registry],
    }),
    apiServerUp: new Gauge({
      name: "bulwark_gateway_apiserver_up",
      help: "1 when the API server answered the last probe",
      registers: [registry],
    }),
    rolloutHeld: new Gauge({
      name: "bulwark_gateway_rollout_held",
      help: "Objects whose latest revision this pod does not serve yet (batched rollout)",
      labelNames,
      registers: [registry],
    }),
    ingressesRefused: new Gauge({
      name: "bulwark_gateway_ingresses_refused",
      help: "Ingresses in the served view that fail Bulwark's review: their routes answer 503 (canaries: not served)",
      registers: [registry],
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
