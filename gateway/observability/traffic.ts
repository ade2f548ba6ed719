// Per-host traffic metrics and the access log record, as ingress-nginx's and Tengine-Ingress's
// per-host monitoring exposes them: requests by status class, request and upstream durations,
// request and response bytes, labelled by host, ingress, service, canary/main and protocol. QPS and
// success rate are rates of the request counter; RT percentiles come from the histograms.

import { hostname } from "node:os";
import { PINO_LEVELS } from "../../kube/log";

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
  /** Why this backend: the canary decision's reason, or the gateway's own answer's name. */
  decision: string;
  /** The upstream's status ("0": no upstream answered). */
  upstreamStatus: number;
  /** From sending the request upstream to the exchange's end (nginx's $upstream_response_time); undefined without an upstream answer. */
  upstreamResponseSeconds: number | undefined;
  /** The request id: the client's X-Request-ID, or the one generated and sent upstream. */
  requestId: string;
  // Access-log-only fields, filled only while the access log is on ("" otherwise).
  /** The client (nginx's $remote_addr): the peer, or whom trusted proxies name. */
  client: string;
  /** The connection's peer (the PROXY protocol's source when used). */
  peer: string;
  userAgent: string;
  /** "http" or "https". */
  scheme: string;
  /** The request's protocol as nginx's $server_protocol writes it: "HTTP/1.1", "HTTP/2.0"… */
  protocol: string;
}

type LabelName = "host" | "ingress" | "service" | "variant" | "protocol";
type Labels = Record<LabelName, string>;

/** The protocols the gateway serves: the `protocol` label's values, as the access log writes them. */
export const PROTOCOLS = ["HTTP/1.0", "HTTP/1.1", "HTTP/2.0"] as const;

/**
 * The `protocol` label for a request's protocol: one of PROTOCOLS, or "other" for one the front
 * door refused (an HTTP/1.2 request line), so the label's values stay a fixed set.
 */
export function protocolLabel(protocol: string): string {
  return (PROTOCOLS as readonly string[]).includes(protocol) ? protocol : "other";
}

const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"] as const;

export function statusClass(status: number): string {
  return STATUS_CLASSES[statusClassIndex(status)]!;
}

function statusClassIndex(status: number): number {
  return status >= 100 && status < 600 ? Math.floor(status / 100) - 1 : 5;
}

/** Seconds: ingress-nginx's request_duration buckets, plus sub-millisecond ones for a fast proxy. */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** One histogram's numbers for one label set: counts per bucket (not cumulative), sum, count. */
class HistogramTally {
  readonly buckets = new Float64Array(DURATION_BUCKETS.length);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    // Linear: most requests land in the first few buckets.
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    if (i < DURATION_BUCKETS.length) this.buckets[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/** Everything counted for one host/ingress/service/variant/protocol. */
class LabelSetTally {
  readonly requests = new Float64Array(STATUS_CLASSES.length);
  readonly duration = new HistogramTally();
  readonly upstream = new HistogramTally();
  requestBytes = 0;
  responseBytes = 0;

  constructor(readonly labels: Labels) {}
}

/** A sample as prom-client's getMetricsAsJSON() gives it, which its aggregation sums. */
interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** One metric as prom-client's getMetricsAsJSON() gives it. */
export interface MetricJson {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Sample[];
}

const NAMES = {
  requests: "bulwark_gateway_requests_total",
  duration: "bulwark_gateway_request_duration_seconds",
  upstream: "bulwark_gateway_upstream_duration_seconds",
  requestBytes: "bulwark_gateway_request_bytes_total",
  responseBytes: "bulwark_gateway_response_bytes_total",
  refused: "bulwark_gateway_requests_refused_total",
  answers: "bulwark_gateway_answers_total",
};

/**
 * The decisions (route-traffic.ts, the error pages) that are the gateway's own answer or send the
 * request to the error backend: the `decision` label of the answers counter, a fixed set. A
 * refused route's decision names its reason ("refused: <why>"), counted as "refused".
 */
const ANSWER_DECISIONS = new Set([
  "source-range-denied",
  "rate-limited",
  "connection-limited",
  "unauthorized",
  "auth-unavailable",
  "auth-denied",
  "auth-signin",
  "auth-error",
  "from-to-www-redirect",
  "app-root",
  "permanent-redirect",
  "temporal-redirect",
  "ssl-redirect",
  "robots",
  "cors-preflight",
  "custom-error",
  "default-backend",
]);

/** The answers counter's label for a decision; undefined for a canary decision (not counted). */
export function answerLabel(decision: string): string | undefined {
  if (decision.startsWith("refused: ")) return "refused";
  return ANSWER_DECISIONS.has(decision) ? decision : undefined;
}

/** One host's count of one kind of answer. */
interface AnswerTally {
  readonly labels: { host: string; decision: string };
  value: number;
}

/**
 * The per-host traffic metrics of one process. The hot path only adds to plain numbers (one Map
 * lookup per request); the Prometheus shape is built when scraped. prom-client's labelled children
 * re-hash their labels on every inc/observe, which measured about 10 µs per request, a third of
 * proxying one (hack/bench/README.md).
 */
export class TrafficMetrics {
  private readonly tallies = new Map<string, LabelSetTally>();
  /**
   * The label set each host used last. A host's requests mostly repeat it (same Ingress, Service,
   * variant and protocol), and checking it costs less than building and hashing the full key.
   */
  private readonly lastByHost = new Map<string, LabelSetTally>();
  /** Requests the front door refused, by reason (a fixed, small set of labels). */
  private readonly refusals = new Map<string, number>();
  /** The gateway's own answers by host and decision (both bounded: served hosts, fixed names). */
  private readonly answers = new Map<string, AnswerTally>();

  refused(reason: string): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
  }

  private tallyFor(record: RequestRecord): LabelSetTally {
    const protocol = protocolLabel(record.protocol);
    const last = this.lastByHost.get(record.host);
    if (last !== undefined) {
      const labels = last.labels;
      if (
        labels.ingress === record.ingress &&
        labels.service === record.service &&
        labels.variant === record.variant &&
        labels.protocol === protocol
      )
        return last;
    }
    const key = `${record.host}\n${record.ingress}\n${record.service}\n${record.variant}\n${protocol}`;
    let found = this.tallies.get(key);
    if (found === undefined) {
      found = new LabelSetTally({
        host: record.host,
        ingress: record.ingress,
        service: record.service,
        variant: record.variant,
        protocol,
      });
      this.tallies.set(key, found);
    }
    this.lastByHost.set(record.host, found);
    return found;
  }

  observe(record: RequestRecord): void {
    const tally = this.tallyFor(record);
    tally.requests[statusClassIndex(record.status)]!++;
    tally.duration.observe(record.durationSeconds);
    if (record.upstreamSeconds !== undefined) tally.upstream.observe(record.upstreamSeconds);
    tally.requestBytes += record.requestBytes;
    tally.responseBytes += record.responseBytes;
    if (record.decision !== "") this.countAnswer(record.host, record.decision);
  }

  private countAnswer(host: string, decision: string): void {
    const label = answerLabel(decision);
    if (label === undefined) return;
    const key = `${host}\n${label}`;
    const found = this.answers.get(key);
    if (found !== undefined) found.value++;
    else this.answers.set(key, { labels: { host, decision: label }, value: 1 });
  }

  /** Forgets the label sets of hosts no longer served, so a churning config cannot grow memory. */
  retainHosts(hosts: ReadonlySet<string>): void {
    for (const [key, tally] of this.tallies) {
      if (!hosts.has(tally.labels.host)) this.tallies.delete(key);
    }
    for (const host of this.lastByHost.keys()) {
      if (!hosts.has(host)) this.lastByHost.delete(host);
    }
    for (const [key, answer] of this.answers) {
      if (!hosts.has(answer.labels.host)) this.answers.delete(key);
    }
  }

  /** The metrics in prom-client's JSON shape (what a worker sends its primary to sum). */
  toJSON(): MetricJson[] {
    const tallies = [...this.tallies.values()];
    // Only label sets that moved bytes have a sample.
    const bytes = (field: "requestBytes" | "responseBytes"): Sample[] =>
      tallies.filter(t => t[field] > 0).map(t => ({ value: t[field], labels: t.labels }));
    const counter = (name: string, help: string, values: Sample[]): MetricJson => ({
      name,
      help,
      type: "counter",
      aggregator: "sum",
      values,
    });
    return [
      counter(
        NAMES.requests,
        "Requests answered, by host, ingress, service, main/canary, protocol and status class",
        tallies.flatMap(t =>
          STATUS_CLASSES.flatMap((cls, i) =>
            t.requests[i] === 0
              ? []
              : [{ value: t.requests[i]!, labels: { ...t.labels, status_class: cls } }],
          ),
        ),
      ),
      histogram(
        NAMES.duration,
        "Time from the request's first byte to the response's last byte",
        tallies.map(t => [t.labels, t.duration]),
      ),
      histogram(
        NAMES.upstream,
        "Time from sending the request upstream to the upstream's response head",
        tallies.map(t => [t.labels, t.upstream]),
      ),
      counter(
        NAMES.requestBytes,
        "Request body bytes received from clients",
        bytes("requestBytes"),
      ),
      counter(NAMES.responseBytes, "Response body bytes sent to clients", bytes("responseBytes")),
      counter(
        NAMES.refused,
        "Requests the front door refused (malformed, ambiguous or over a limit), by reason",
        [...this.refusals].map(([reason, value]) => ({ value, labels: { reason } })),
      ),
      counter(
        NAMES.answers,
        "Requests the gateway answered itself (source-range-denied, rate-limited, connection-limited, unauthorized, auth-unavailable, auth-denied, auth-signin, auth-error, refused, redirects, robots, cors-preflight, custom-error) or sent to the default backend, by host and decision",
        [...this.answers.values()].map(({ labels, value }) => ({ value, labels })),
      ),
    ];
  }
}

/** A histogram's samples as prom-client writes them: cumulative buckets, +Inf, sum, count. */
function histogram(name: string, help: string, tallies: [Labels, HistogramTally][]): MetricJson {
  const values: Sample[] = [];
  for (const [labels, tally] of tallies) {
    if (tally.count === 0) continue;
    let cumulative = 0;
    DURATION_BUCKETS.forEach((le, i) => {
      cumulative += tally.buckets[i]!;
      values.push({ value: cumulative, labels: { le, ...labels }, metricName: `${name}_bucket` });
    });
    values.push(
      { value: tally.count, labels: { le: "+Inf", ...labels }, metricName: `${name}_bucket` },
      { value: tally.sum, labels, metricName: `${name}_sum` },
      { value: tally.count, labels, metricName: `${name}_count` },
    );
  }
  return { name, help, type: "histogram", aggregator: "sum", values };
}

/**
 * `count` thousandths as String(count / 1000) writes them ("0.834", "12", "1.5"), built from
 * integers: a double's shortest form costs a call into V8's runtime, once per duration per
 * request. Outside 0 … 2^31 it is the plain String().
 */
export function thousandths(count: number): string {
  if (!(count >= 0 && count < 2 ** 31) || !Number.isInteger(count)) return String(count / 1000);
  const whole = Math.floor(count / 1000);
  const rest = count - whole * 1000;
  if (rest === 0) return `${whole}`;
  if (rest % 100 === 0) return `${whole}.${rest / 100}`;
  if (rest % 10 === 0) return `${whole}.${rest < 100 ? "0" : ""}${rest / 10}`;
  return `${whole}.${rest < 10 ? "00" : rest < 100 ? "0" : ""}${rest}`;
}

/** Seconds as milliseconds with microsecond resolution. */
const ms = (seconds: number): string => thousandths(Math.round(seconds * 1e6));
/**
 * `value` as a JSON string, as JSON.stringify writes it. Most values (addresses, names, ids,
 * paths) need no escape: those are checked in place and wrapped, which in the gateway costs a
 * fraction of a call into JSON.stringify; the rest go to it.
 */
export function quoted(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // Controls, '"', '\\' and everything past ASCII (escapes, lone surrogates) need JSON.stringify.
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c || unit > 0x7e) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** The fixed head of every gateway log line, pino's shape (kube/log.ts): level, time, pid, hostname. */
function head(level: number, time: number, pid: number): string {
  const last = lastHead;
  if (last.time === time && last.level === level && last.pid === pid) return last.text;
  const text = `{"level":${level},"time":${time},"pid":${pid},"hostname":${HOSTNAME}`;
  lastHead = { level, time, pid, text };
  return text;
}

/** The last head written: the lines of one millisecond share it (a thousand or more at full load). */
let lastHead = { level: -1, time: -1, pid: -1, text: "" };

const HOSTNAME = JSON.stringify(hostname());

/** The log line for a request the front door refused (one per connection: refusing closes it). */
export function refusalLogLine(
  refusal: { status: number; reason: string },
  client: string,
  pid: number,
  time: number,
): string {
  return (
    `${head(PINO_LEVELS.warn ?? 40, time, pid)},"msg":"request refused","component":"bulwark-gateway"` +
    `,"log":"access","remote_addr":${quoted(client)},"status":${refusal.status}` +
    `,"reason":${quoted(refusal.reason)}}\n`
  );
}

/** Seconds with millisecond resolution, as nginx writes $upstream_response_time; null when none. */
const seconds = (value: number | undefined): string =>
  value === undefined ? "null" : thousandths(Math.round(value * 1e3));

/** The peer when it is not the client (a trusted proxy forwarded the request). */
const peerField = (record: RequestRecord): string =>
  record.peer === record.client ? "" : `,"peer_addr":${quoted(record.peer)}`;

/**
 * The access log line for one request: JSON in the shape of every Bulwark log line (kube/log.ts:
 * pino's level, time, pid, hostname, msg) with what ingress-nginx's log carries ($remote_addr,
 * $http_user_agent, $req_id, $upstream_addr, $upstream_status, $upstream_response_time, $scheme,
 * $server_protocol) plus the canary decision. Written as a template with each string quoted by
 * JSON.stringify: the same JSON as stringifying an object, at about half the cost, which matters
 * once per request.
 */
export function accessLogLine(record: RequestRecord, pid: number, time: number): string {
  const upstreamMs = record.upstreamSeconds === undefined ? "-1" : ms(record.upstreamSeconds);
  const upstreamStatus = record.upstreamStatus === 0 ? "null" : String(record.upstreamStatus);
  return (
    `${head(PINO_LEVELS.info ?? 30, time, pid)},"msg":"request","component":"bulwark-gateway","log":"access"` +
    `,"remote_addr":${quoted(record.client)}${peerField(record)}` +
    `,"request_id":${quoted(record.requestId)}` +
    `,"host":${quoted(record.authority)},"rule_host":${quoted(record.host)}` +
    `,"method":${quoted(record.method)},"path":${quoted(record.path)}` +
    `,"protocol":${quoted(record.protocol)},"scheme":${quoted(record.scheme)},"status":${record.status}` +
    `,"user_agent":${quoted(record.userAgent)}` +
    `,"ingress":${quoted(record.ingress)},"service":${quoted(record.service)}` +
    `,"variant":${quoted(record.variant)},"upstream_addr":${quoted(record.upstream)}` +
    `,"upstream_status":${upstreamStatus}` +
    `,"upstream_response_time":${seconds(record.upstreamResponseSeconds)}` +
    `,"decision":${quoted(record.decision)},"request_bytes":${record.requestBytes}` +
    `,"response_bytes":${record.responseBytes},"duration_ms":${ms(record.durationSeconds)}` +
    `,"upstream_ms":${upstreamMs}}\n`
  );
}
