// The permission server's Prometheus metrics, in a registry of its own (served at /metrics).
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export class Metrics {
  readonly registry = new Registry();
  readonly jobs = new Counter({
    name: "bulwark_permission_jobs_total",
    help: "Permission grant jobs by provider and outcome (granted, denied, timeout, aborted)",
    labelNames: ["provider", "outcome"],
    registers: [this.registry],
  });
  readonly attempts = new Counter({
    name: "bulwark_permission_attempts_total",
    help: "Grant attempts per pod by outcome (granted, failed, blocked, aborted)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly timeToGranted = new Histogram({
    name: "bulwark_permission_time_to_granted_seconds",
    help: "From the pod's first call to its grants being recorded",
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry],
  });
  readonly revokes = new Counter({
    name: "bulwark_permission_revokes_total",
    help: "Revocations by provider and outcome (revoked, kept, skipped, failed)",
    labelNames: ["provider", "outcome"],
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: "bulwark_permission_http_requests_total",
    help: "HTTP requests by route and status code",
    labelNames: ["route", "code"],
    registers: [this.registry],
  });
  readonly providerBreakerOpen = new Gauge({
    name: "bulwark_permission_provider_breaker_open",
    help: "1 while a provider's breaker is open or half-open",
    labelNames: ["provider"],
    registers: [this.registry],
  });
  readonly running = new Gauge({
    name: "bulwark_permission_attempts_running",
    help: "Grant attempts this replica is running",
    registers: [this.registry],
  });
}
