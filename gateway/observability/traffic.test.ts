import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import { Counter, Histogram, Registry } from "prom-client";
import { sumMetrics, sumProcessMetrics } from "./scrape";
import {
  accessLogLine,
  refusalLogLine,
  answerLabel,
  DURATION_BUCKETS,
  PROTOCOLS,
  protocolLabel,
  quoted,
  thousandths,
  statusClass,
  TrafficMetrics,
  type RequestRecord,
} from "./traffic";
import { RECORD } from "./testkit";

const base: RequestRecord = RECORD;

function sample(metrics: TrafficMetrics, name: string, labels: Record<string, string>) {
  // Histograms list their _count and _sum samples under the histogram's name.
  const base = name.replace(/_(count|sum)$/, "");
  const metric = metrics.toJSON().find(m => m.name === name || m.name === base);
  const values = (metric?.values ?? []).filter(
    v => v.metricName === undefined || v.metricName === name,
  );
  return values
    .filter(v => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

describe("TrafficMetrics", () => {
  it("counts requests per host, variant and status class, and sums bytes", async () => {
    const metrics = new TrafficMetrics();
    metrics.observe(base);
    metrics.observe({ ...base, status: 503, responseBytes: 20 });
    metrics.observe({ ...base, variant: "canary", service: "shop/web-v2", requestBytes: 7 });
    metrics.observe({ ...base, host: "b.example.com" });
    const requests = "bulwark_gateway_requests_total";
    assert.equal(sample(metrics, requests, { host: "a.example.com" }), 3);
    assert.equal(sample(metrics, requests, { host: "a.example.com", status_class: "5xx" }), 1);
    assert.equal(sample(metrics, requests, { variant: "canary" }), 1);
    assert.equal(
      sample(metrics, "bulwark_gateway_response_bytes_total", { host: "a.example.com" }),
      220,
    );
    assert.equal(sample(metrics, "bulwark_gateway_request_bytes_total", { variant: "canary" }), 7);
    assert.equal(
      sample(metrics, "bulwark_gateway_request_duration_seconds_count", {
        host: "b.example.com",
      }),
      1,
    );
  });
  it("a request without upstream is counted but not observed upstream", async () => {
    const metrics = new TrafficMetrics();
    metrics.observe({ ...base, status: 404, upstreamSeconds: undefined, service: "" });
    assert.equal(sample(metrics, "bulwark_gateway_upstream_duration_seconds_count", {}), 0);
    assert.equal(sample(metrics, "bulwark_gateway_requests_total", { status_class: "4xx" }), 1);
  });
  it("labels each series with the protocol the access log writes: HTTP/1.0, HTTP/1.1, HTTP/2.0", () => {
    const metrics = new TrafficMetrics();
    metrics.observe(base);
    metrics.observe({ ...base, protocol: "HTTP/2.0", requestBytes: 5 });
    metrics.observe({ ...base, protocol: "HTTP/2.0", status: 502 });
    metrics.observe({ ...base, protocol: "HTTP/1.0" });
    const requests = "bulwark_gateway_requests_total";
    assert.equal(sample(metrics, requests, { protocol: "HTTP/1.1" }), 1);
    assert.equal(sample(metrics, requests, { protocol: "HTTP/2.0" }), 2);
    assert.equal(sample(metrics, requests, { protocol: "HTTP/2.0", status_class: "5xx" }), 1);
    assert.equal(sample(metrics, requests, { protocol: "HTTP/1.0" }), 1);
    assert.equal(
      sample(metrics, "bulwark_gateway_request_duration_seconds_count", { protocol: "HTTP/2.0" }),
      2,
    );
    assert.equal(
      sample(metrics, "bulwark_gateway_request_bytes_total", { protocol: "HTTP/2.0" }),
      5,
    );
    assert.equal(
      sample(metrics, "bulwark_gateway_upstream_duration_seconds_count", { protocol: "HTTP/1.0" }),
      1,
    );
  });
  it("keeps the protocol label a fixed set: what a client makes up is counted as other", () => {
    const metrics = new TrafficMetrics();
    for (const made of ["HTTP/1.2", "HTTP/9.9", "", "h2", "HTTP/2.0\n", "x".repeat(100)]) {
      metrics.observe({ ...base, protocol: made });
    }
    const labels = new Set(
      metrics.toJSON().flatMap(m => m.values.map(v => String(v.labels.protocol))),
    );
    assert.deepEqual([...labels], ["other"]);
    assert.deepEqual(PROTOCOLS.map(protocolLabel), [...PROTOCOLS]);
  });
  it("counts each label set of a host apart, however they interleave", () => {
    const metrics = new TrafficMetrics();
    const expected = new Map<string, number>();
    let seed = 7;
    const pick = <T>(options: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return options[seed % options.length]!;
    };
    for (let i = 0; i < 2000; i++) {
      const record = {
        ...base,
        host: pick(["a.example.com", "b.example.com"]),
        ingress: pick(["shop/web", "shop/other"]),
        service: pick(["shop/web", "shop/web-v2"]),
        variant: pick(["main", "canary"] as const),
        protocol: pick(["HTTP/1.1", "HTTP/2.0"]),
      };
      metrics.observe(record);
      const key = [record.host, record.ingress, record.service, record.variant, record.protocol];
      expected.set(key.join(" "), (expected.get(key.join(" ")) ?? 0) + 1);
    }
    for (const [key, count] of expected) {
      const [host, ingress, service, variant, protocol] = key.split(" ");
      const labels = { host: host!, ingress: ingress!, service: service!, variant: variant! };
      const requests = sample(metrics, "bulwark_gateway_requests_total", {
        ...labels,
        protocol: protocol!,
      });
      assert.equal(requests, count, key);
    }
  });

  it("forgets hosts that are no longer served", async () => {
    const metrics = new TrafficMetrics();
    metrics.observe(base);
    metrics.observe({ ...base, host: "gone.example.com" });
    metrics.retainHosts(new Set(["a.example.com"]));
    assert.equal(
      sample(metrics, "bulwark_gateway_requests_total", { host: "gone.example.com" }),
      0,
    );
    assert.equal(sample(metrics, "bulwark_gateway_requests_total", { host: "a.example.com" }), 1);
    metrics.observe({ ...base, host: "gone.example.com" });
    assert.equal(
      sample(metrics, "bulwark_gateway_requests_total", { host: "gone.example.com" }),
      1,
    );
  });
});

describe("the gateway's own answers", () => {
  const answers = "bulwark_gateway_answers_total";
  const own = { ...base, upstream: "", upstreamSeconds: undefined, upstreamStatus: 0 };

  it("are counted by host and decision; a canary's decision is not an answer", () => {
    const metrics = new TrafficMetrics();
    metrics.observe({ ...own, status: 403, decision: "source-range-denied" });
    metrics.observe({ ...own, status: 403, decision: "source-range-denied" });
    metrics.observe({ ...own, status: 302, decision: "temporal-redirect" });
    metrics.observe({ ...base, decision: "header x-canary=always" });
    metrics.observe({ ...base, decision: "default-backend" });
    assert.equal(sample(metrics, answers, { decision: "source-range-denied" }), 2);
    assert.equal(sample(metrics, answers, { decision: "temporal-redirect" }), 1);
    assert.equal(sample(metrics, answers, { decision: "default-backend" }), 1);
    assert.equal(sample(metrics, answers, {}), 4);
  });

  it("name a refused route's reason only as refused: no free text in a label", () => {
    const metrics = new TrafficMetrics();
    metrics.observe({ ...own, status: 503, decision: "refused: server-snippet is not supported" });
    const values = metrics.toJSON().find(m => m.name === answers)?.values ?? [];
    assert.deepEqual(
      values.map(v => v.labels),
      [{ host: "a.example.com", decision: "refused" }],
    );
  });

  it("forget hosts no longer served", () => {
    const metrics = new TrafficMetrics();
    metrics.observe({ ...own, host: "gone.example.com", decision: "robots" });
    metrics.observe({ ...own, decision: "robots" });
    metrics.retainHosts(new Set(["a.example.com"]));
    assert.equal(sample(metrics, answers, { host: "gone.example.com" }), 0);
    assert.equal(sample(metrics, answers, { host: "a.example.com" }), 1);
  });

  it("label the policy's and the error pages' decisions as they are, and no canary reason", () => {
    const decisions = [
      "source-range-denied",
      "rate-limited",
      "connection-limited",
      "ssl-redirect",
      "custom-error",
      "default-backend",
    ];
    assert.deepEqual(decisions.map(answerLabel), decisions);
    for (const canary of ["", "no canary", "weight", "cookie canary=always (never)"]) {
      assert.equal(answerLabel(canary), undefined, canary);
    }
  });
});

describe("TrafficMetrics' Prometheus text", () => {
  /** The same observations through prom-client's own metrics, as the reference. */
  function promClientText(records: RequestRecord[], refusals: string[] = []): Promise<string> {
    const registry = new Registry();
    const labelNames = ["host", "ingress", "service", "variant", "protocol"];
    const registers = [registry];
    const requests = new Counter({
      name: "bulwark_gateway_requests_total",
      help: "Requests answered, by host, ingress, service, main/canary, protocol and status class",
      labelNames: [...labelNames, "status_class"],
      registers,
    });
    const histogram = (name: string, help: string) =>
      new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers });
    const duration = histogram(
      "bulwark_gateway_request_duration_seconds",
      "Time from the request's first byte to the response's last byte",
    );
    const upstream = histogram(
      "bulwark_gateway_upstream_duration_seconds",
      "Time from sending the request upstream to the upstream's response head",
    );
    const counter = (name: string, help: string) =>
      new Counter({ name, help, labelNames, registers });
    const requestBytes = counter(
      "bulwark_gateway_request_bytes_total",
      "Request body bytes received from clients",
    );
    const responseBytes = counter(
      "bulwark_gateway_response_bytes_total",
      "Response body bytes sent to clients",
    );
    const refused = new Counter({
      name: "bulwark_gateway_requests_refused_total",
      help: "Requests the front door refused (malformed, ambiguous or over a limit), by reason",
      labelNames: ["reason"],
      registers,
    });
    for (const reason of refusals) refused.inc({ reason });
    const answers = new Counter({
      name: "bulwark_gateway_answers_total",
      help: "Requests the gateway answered itself (source-range-denied, rate-limited, connection-limited, unauthorized, auth-unavailable, auth-denied, auth-signin, auth-error, refused, redirects, robots, cors-preflight, custom-error) or sent to the default backend, by host and decision",
      labelNames: ["host", "decision"],
      registers,
    });
    for (const r of records) {
      const decision = answerLabel(r.decision);
      if (decision !== undefined) answers.inc({ host: r.host, decision });
      const { host, ingress, service, variant } = r;
      const labels = { host, ingress, service, variant, protocol: protocolLabel(r.protocol) };
      requests.inc({ ...labels, status_class: statusClass(r.status) });
      duration.observe(labels, r.durationSeconds);
      if (r.upstreamSeconds !== undefined) upstream.observe(labels, r.upstreamSeconds);
      if (r.requestBytes > 0) requestBytes.inc(labels, r.requestBytes);
      if (r.responseBytes > 0) responseBytes.inc(labels, r.responseBytes);
    }
    return registry.metrics();
  }

  it("is what prom-client writes for the same requests, bucket by bucket", async () => {
    const records: RequestRecord[] = [
      base,
      { ...base, status: 503, durationSeconds: 0.0005, upstreamSeconds: 0.0004 },
      { ...base, durationSeconds: 0.0005000001, upstreamSeconds: 12 },
      { ...base, variant: "canary", service: "shop/web-v2", requestBytes: 7, responseBytes: 0 },
      { ...base, host: "b.example.com", status: 404, upstreamSeconds: undefined, service: "" },
      { ...base, status: 101, durationSeconds: 30 },
      { ...base, status: 403, upstreamSeconds: undefined, decision: "source-range-denied" },
      { ...base, status: 503, upstreamSeconds: undefined, decision: "refused: snippet" },
      { ...base, protocol: "HTTP/2.0", responseBytes: 3 },
      { ...base, protocol: "HTTP/1.0", status: 404, upstreamSeconds: undefined },
    ];
    const refusals = ["bare-line-feed", "invalid-host", "bare-line-feed"];
    const ours = new TrafficMetrics();
    records.forEach(r => ours.observe(r));
    refusals.forEach(r => ours.refused(r));
    const [expected, actual] = await Promise.all([
      promClientText(records, refusals),
      sumProcessMetrics([ours.toJSON()]),
    ]);
    // Sample order within a family carries no meaning (prom-client's follows first use).
    const lines = (text: string) => text.split("\n").sort();
    assert.deepEqual(lines(actual), lines(expected));
    assert.ok(lines(actual).length > 60, "every bucket of every label set is there");
  });
});

describe("sumMetrics (the counts of workers that died)", () => {
  it("sums two processes' metrics into one list with the same text as summing at scrape", async () => {
    const [one, two] = [new TrafficMetrics(), new TrafficMetrics()];
    one.observe(base);
    one.observe({ ...base, status: 502, durationSeconds: 0.2 });
    two.observe(base);
    two.observe({ ...base, host: "b.example.com", requestBytes: 9 });
    const merged = sumMetrics([one.toJSON(), two.toJSON()]);
    assert.equal(
      await sumProcessMetrics([merged]),
      await sumProcessMetrics([one.toJSON(), two.toJSON()]),
    );
    assert.equal(sample(one, "bulwark_gateway_requests_total", {}), 2);
    const requests = merged.find(m => m.name === "bulwark_gateway_requests_total");
    assert.equal(
      requests?.values.reduce((n, v) => n + v.value, 0),
      4,
      "every request once",
    );
  });
});

describe("statusClass and accessLogLine", () => {
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
  const parsed = (record: RequestRecord) =>
    JSON.parse(accessLogLine(record, 42, 1_796_000_000_000)) as Record<string, unknown>;
  it("is one JSON line with every field, durations in milliseconds", () => {
    const line = accessLogLine(base, 42, 1_796_000_000_000);
    assert.ok(line.endsWith("}\n") && !line.slice(0, -1).includes("\n"), "one line");
    assert.deepEqual(parsed({ ...base, decision: "header x-canary=always" }), {
      level: 30,
      time: 1_796_000_000_000,
      pid: 42,
      hostname: hostname(),
      msg: "request",
      component: "bulwark-gateway",
      log: "access",
      remote_addr: "203.0.113.7",
      request_id: "0123456789abcdef0123456789abcdef",
      host: "a.example.com:8080",
      rule_host: "a.example.com",
      method: "GET",
      path: "/",
      protocol: "HTTP/1.1",
      scheme: "http",
      status: 200,
      user_agent: "curl/8.5.0",
      ingress: "shop/web",
      service: "shop/web",
      variant: "main",
      upstream_addr: "10.0.0.1:8080",
      upstream_status: 200,
      upstream_response_time: 0.002,
      decision: "header x-canary=always",
      request_bytes: 0,
      response_bytes: 100,
      duration_ms: 3,
      upstream_ms: 2,
    });
    assert.equal(parsed({ ...base, upstreamSeconds: undefined }).upstream_ms, -1);
  });
  it("names the peer only when it is not the client, and no upstream as null", () => {
    const forwarded = parsed({ ...base, client: "198.51.100.9", peer: "10.0.0.2" });
    assert.deepEqual([forwarded.remote_addr, forwarded.peer_addr], ["198.51.100.9", "10.0.0.2"]);
    assert.equal("peer_addr" in parsed(base), false);
    const own = parsed({
      ...base,
      upstream: "",
      upstreamStatus: 0,
      upstreamSeconds: undefined,
      upstreamResponseSeconds: undefined,
    });
    assert.deepEqual(
      [own.upstream_addr, own.upstream_status, own.upstream_response_time],
      ["", null, null],
    );
  });
  it("escapes what a client controls: quotes, backslashes, control characters, non-ASCII", () => {
    const hostile = 'a"b\\c\n{"x":1}\u0000\u2028é';
    const entry = parsed({ ...base, authority: hostile, path: `/${hostile}`, method: hostile });
    assert.deepEqual([entry.host, entry.path, entry.method], [hostile, `/${hostile}`, hostile]);
  });
});

describe("quoted (the access log's JSON strings)", () => {
  /** A string of `length` code units drawn from `pool`, with a fixed seed per case. */
  function randomText(seed: number, length: number, pool: number[]): string {
    let state = seed;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
    return String.fromCharCode(...Array.from({ length }, () => pool[next() % pool.length]!));
  }
  const ascii = Array.from({ length: 0x80 }, (_, i) => i);
  const printable = ascii.filter(c => c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c);
  const wide = [...ascii, 0x7f, 0x80, 0xe9, 0x2028, 0x2029, 0xd83d, 0xde00, 0xdc00, 0xfeff, 0xffff];

  it("writes what JSON.stringify writes, for 3000 generated strings", () => {
    for (let i = 0; i < 3000; i++) {
      const pool = i % 3 === 0 ? printable : i % 3 === 1 ? ascii : wide;
      const text = randomText(i + 1, i % 40, pool);
      assert.equal(quoted(text), JSON.stringify(text), `case ${i}: ${JSON.stringify(text)}`);
    }
  });

  it("writes what JSON.stringify writes for every single code unit", () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = `a${String.fromCharCode(unit)}b`;
      assert.equal(quoted(text), JSON.stringify(text), `U+${unit.toString(16)}`);
    }
  });
});

describe("thousandths (the access log's durations)", () => {
  it("writes what String(n / 1000) writes, for edges and 20 000 generated counts", () => {
    const edges = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 1010, 1100, 12_340, 2 ** 31 - 1];
    const beyond = [2 ** 31, 2 ** 40 + 7, -1, -1500, 0.5, Number.NaN, Infinity];
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
    const generated = Array.from({ length: 20_000 }, (_, i) => next() % 10 ** (1 + (i % 9)));
    for (const count of [...edges, ...beyond, ...generated])
      assert.equal(thousandths(count), String(count / 1000), `count ${count}`);
  });
});

describe("refusalLogLine", () => {
  it("names the peer as remote_addr, as the access log does, with the status and reason", () => {
    const line = refusalLogLine(
      { status: 400, reason: "bare-lf" },
      "203.0.113.9",
      42,
      1_796_000_000_000,
    );
    assert.ok(line.endsWith("}\n"));
    assert.deepEqual(JSON.parse(line), {
      level: 40,
      time: 1_796_000_000_000,
      pid: 42,
      hostname: hostname(),
      msg: "request refused",
      component: "bulwark-gateway",
      log: "access",
      remote_addr: "203.0.113.9",
      status: 400,
      reason: "bare-lf",
    });
  });
});
