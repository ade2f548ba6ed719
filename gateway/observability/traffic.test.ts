import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { accessLogEntry, statusClass, TrafficMetrics, type RequestRecord } from "./traffic";

const base: RequestRecord = {
  host: "a.example.com",
  authority: "a.example.com:8080",
  ingress: "shop/web",
  service: "shop/web",
  variant: "main",
  method: "GET",
  path: "/",
  status: 200,
  requestBytes: 0,
  responseBytes: 100,
  durationSeconds: 0.003,
  upstreamSeconds: 0.002,
  upstream: "10.0.0.1:8080",
  decision: "no canary",
};

async function sample(registry: Registry, name: string, labels: Record<string, string>) {
  // Histograms list their _count and _sum samples under the histogram's name.
  const base = name.replace(/_(count|sum)$/, "");
  const metric = (await registry.getMetricsAsJSON()).find(m => m.name === name || m.name === base);
  type Sample = { labels: Record<string, string>; value: number; metricName?: string };
  const values = ((metric?.values ?? []) as Sample[]).filter(
    v => v.metricName === undefined || v.metricName === name,
  );
  return values
    .filter(v => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

describe("TrafficMetrics", () => {
  it("counts requests per host, variant and status class, and sums bytes", async () => {
    const registry = new Registry();
    const metrics = new TrafficMetrics(registry);
    metrics.observe(base);
    metrics.observe({ ...base, status: 503, responseBytes: 20 });
    metrics.observe({ ...base, variant: "canary", service: "shop/web-v2", requestBytes: 7 });
    metrics.observe({ ...base, host: "b.example.com" });
    const requests = "bulwark_gateway_requests_total";
    assert.equal(await sample(registry, requests, { host: "a.example.com" }), 3);
    assert.equal(
      await sample(registry, requests, { host: "a.example.com", status_class: "5xx" }),
      1,
    );
    assert.equal(await sample(registry, requests, { variant: "canary" }), 1);
    assert.equal(
      await sample(registry, "bulwark_gateway_response_bytes_total", { host: "a.example.com" }),
      220,
    );
    assert.equal(
      await sample(registry, "bulwark_gateway_request_bytes_total", { variant: "canary" }),
      7,
    );
    assert.equal(
      await sample(registry, "bulwark_gateway_request_duration_seconds_count", {
        host: "b.example.com",
      }),
      1,
    );
  });
  it("a request without upstream is counted but not observed upstream", async () => {
    const registry = new Registry();
    const metrics = new TrafficMetrics(registry);
    metrics.observe({ ...base, status: 404, upstreamSeconds: undefined, service: "" });
    assert.equal(await sample(registry, "bulwark_gateway_upstream_duration_seconds_count", {}), 0);
    assert.equal(
      await sample(registry, "bulwark_gateway_requests_total", { status_class: "4xx" }),
      1,
    );
  });
  it("forgets hosts that are no longer served", async () => {
    const registry = new Registry();
    const metrics = new TrafficMetrics(registry);
    metrics.observe(base);
    metrics.observe({ ...base, host: "gone.example.com" });
    metrics.retainHosts(new Set(["a.example.com"]));
    assert.equal(
      await sample(registry, "bulwark_gateway_requests_total", { host: "gone.example.com" }),
      0,
    );
    assert.equal(
      await sample(registry, "bulwark_gateway_requests_total", { host: "a.example.com" }),
      1,
    );
    metrics.observe({ ...base, host: "gone.example.com" });
    assert.equal(
      await sample(registry, "bulwark_gateway_requests_total", { host: "gone.example.com" }),
      1,
    );
  });
});

describe("statusClass and accessLogEntry", () => {
  it("classes", () => {
    assert.deepEqual([101, 200, 302, 404, 502, 700].map(statusClass), [
      "1xx",
      "2xx",
      "3xx",
      "4xx",
      "5xx",
      "other",
    ]);
  });
  it("the log line carries the decision and durations in milliseconds", () => {
    const entry = accessLogEntry({ ...base, decision: "header x-canary=always" });
    assert.equal(entry.decision, "header x-canary=always");
    assert.equal(entry.duration_ms, 3);
    assert.equal(entry.upstream_ms, 2);
    assert.equal(accessLogEntry({ ...base, upstreamSeconds: undefined }).upstream_ms, -1);
  });
  it("logs the Host the client sent and the rule's host apart", () => {
    const entry = accessLogEntry(base);
    assert.equal(entry.host, "a.example.com:8080");
    assert.equal(entry.rule_host, "a.example.com");
  });
});
