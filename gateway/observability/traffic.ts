// Per-host traffic metrics and the access log record, as ingress-nginx's and Tengine-Ingress's
// per-host monitoring exposes them: requests by status class, request and upstream durations,
// request and response bytes, labelled by host, ingress, service and canary/main. QPS and success
// rate are rates of the request counter; RT percentiles come from the histograms.
//
// The hot path calls `observe` once per request: label children are looked up once per label
// set and cached, so a request costs a Map lookup and a few increments, not label hashing.
import { Counter, Histogram, type Registry } from "prom-client";

/** One finished request, as the proxy saw it. */
export interface RequestRecord {
  /** The rule's host as written in the Ingress ("" when no route matched): the metrics' label. */
  host: string;
  /** The Host the client sent, for the access log. */
  authority: string;
  /** namespace/name of the Ingress that routed it; "" when no route matched. */
  ingress: string;
  /** namespace/name of the Service that answered; "" when none did. */
  service: string;
  /** "main", or "canary" when a canary ingress's backend answered. */
  variant: "main" | "canary";
  method: string;
  path: string;
  status: number;
  requestBytes: number;
  responseBytes: number;
  durationSeconds: number;
  /** Time from sending the request upstream to its response head; undefined without upstream. */
  upstreamSeconds: number | undefined;
  /** ip:port of the endpoint that answered; "" when none did. */
  upstream: string;
  /** Why this backend: the canary decision's reason. */
  decision: string;
}

const LABELS = ["host", "ingress", "service", "variant"] as const;

export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "other";
}

/** Seconds: ingress-nginx's request_duration buckets, plus sub-millisecond ones for a fast proxy. */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

type CounterChild = ReturnType<Counter<string>["labels"]>;
type HistogramChild = ReturnType<Histogram<string>["labels"]>;

interface Children {
  requests: Map<string, CounterChild>;
  duration: HistogramChild;
  upstream: HistogramChild;
  requestBytes: CounterChild;
  responseBytes: CounterChild;
}

export class TrafficMetrics {
  private readonly requests: Counter<string>;
  private readonly duration: Histogram<string>;
  private readonly upstream: Histogram<string>;
  private readonly requestBytes: Counter<string>;
  private readonly responseBytes: Counter<string>;
  private readonly children = new Map<string, Children>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: "bulwark_gateway_requests_total",
      help: "Requests answered, by host, ingress, service, main/canary and status class",
      labelNames: [...LABELS, "status_class"],
      registers,
    });
    this.duration = new Histogram({
      name: "bulwark_gateway_request_duration_seconds",
      help: "Time from the request's first byte to the response's last byte",
      labelNames: [...LABELS],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.upstream = new Histogram({
      name: "bulwark_gateway_upstream_duration_seconds",
      help: "Time from sending the request upstream to the upstream's response head",
      labelNames: [...LABELS],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.requestBytes = new Counter({
      name: "bulwark_gateway_request_bytes_total",
      help: "Request body bytes received from clients",
      labelNames: [...LABELS],
      registers,
    });
    this.responseBytes = new Counter({
      name: "bulwark_gateway_response_bytes_total",
      help: "Response body bytes sent to clients",
      labelNames: [...LABELS],
      registers,
    });
  }

  private childrenFor(record: RequestRecord): Children {
    const key = `${record.host}\n${record.ingress}\n${record.service}\n${record.variant}`;
    let found = this.children.get(key);
    if (found === undefined) {
      const labels = {
        host: record.host,
        ingress: record.ingress,
        service: record.service,
        variant: record.variant,
      };
      found = {
        requests: new Map(),
        duration: this.duration.labels(labels),
        upstream: this.upstream.labels(labels),
        requestBytes: this.requestBytes.labels(labels),
        responseBytes: this.responseBytes.labels(labels),
      };
      this.children.set(key, found);
    }
    return found;
  }

  observe(record: RequestRecord): void {
    const children = this.childrenFor(record);
    const cls = statusClass(record.status);
    let counter = children.requests.get(cls);
    if (counter === undefined) {
      counter = this.requests.labels({
        host: record.host,
        ingress: record.ingress,
        service: record.service,
        variant: record.variant,
        status_class: cls,
      });
      children.requests.set(cls, counter);
    }
    counter.inc();
    children.duration.observe(record.durationSeconds);
    if (record.upstreamSeconds !== undefined) children.upstream.observe(record.upstreamSeconds);
    if (record.requestBytes > 0) children.requestBytes.inc(record.requestBytes);
    if (record.responseBytes > 0) children.responseBytes.inc(record.responseBytes);
  }

  /** Forgets the label sets of hosts no longer served, so a churning config cannot grow memory. */
  retainHosts(hosts: ReadonlySet<string>): void {
    for (const [key, children] of this.children) {
      const [host = "", ingress = "", service = "", variant = ""] = key.split("\n");
      if (hosts.has(host)) continue;
      const labels = { host, ingress, service, variant };
      for (const status_class of children.requests.keys()) {
        this.requests.remove({ ...labels, status_class });
      }
      for (const metric of [this.duration, this.upstream, this.requestBytes, this.responseBytes]) {
        metric.remove(labels);
      }
      this.children.delete(key);
    }
  }
}

/** The access log line (JSON) for one request: what ingress-nginx's log carries, plus the decision. */
export function accessLogEntry(record: RequestRecord): Record<string, string | number> {
  return {
    host: record.authority,
    rule_host: record.host,
    method: record.method,
    path: record.path,
    status: record.status,
    ingress: record.ingress,
    service: record.service,
    variant: record.variant,
    upstream: record.upstream,
    decision: record.decision,
    request_bytes: record.requestBytes,
    response_bytes: record.responseBytes,
    duration_ms: Math.round(record.durationSeconds * 1e6) / 1e3,
    upstream_ms:
      record.upstreamSeconds === undefined ? -1 : Math.round(record.upstreamSeconds * 1e6) / 1e3,
  };
}
