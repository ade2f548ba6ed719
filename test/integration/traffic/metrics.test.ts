// The admin port's /metrics counts exactly the requests sent, per host, variant and status class,
// with one worker and with two (whose counts the primary sums at scrape time), and the access log
// has one JSON line per request.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { waitUntil } from "../../harness/wait";
import type { Answer, AskOptions } from "../../../gateway/proxy/testkit";
import { ingress, type RunningGateway } from "../gateway/harness";
import {
  canary,
  openGateway,
  openNamespace,
  scrape,
  total,
  type Client,
  type Sample,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const HOST = "metrics.test";
const REQUESTS = "bulwark_gateway_requests_total";
/** A route the gateway answers itself (temporal-redirect). */
const MOVED = "moved.metrics.test";

interface Sent {
  label: { host: string; variant?: string; status_class: string };
  count: number;
  send: (client: Client) => Promise<Answer>;
}

const BODY = "b".repeat(100);
/** The User-Agent of the counted requests, which picks their access log lines out. */
const PLAN_AGENT = "bulwark-metrics-plan";

const PLAN: Sent[] = [
  {
    label: { host: HOST, variant: "main", status_class: "2xx" },
    count: 23,
    send: c => c.send(HOST, "/a"),
  },
  {
    label: { host: HOST, variant: "canary", status_class: "2xx" },
    count: 7,
    send: c => c.send(HOST, "/b", { headers: { "x-beta": "always" } }),
  },
  {
    label: { host: HOST, variant: "main", status_class: "5xx" },
    count: 5,
    send: c => c.send(HOST, "/?status=503"),
  },
  {
    label: { host: HOST, variant: "main", status_class: "4xx" },
    count: 4,
    send: c => c.send(HOST, "/?status=404"),
  },
  {
    label: { host: HOST, variant: "main", status_class: "2xx" },
    count: 6,
    send: c => c.send(HOST, "/upload", { method: "POST", body: BODY }),
  },
  // No route: the gateway's own 404, under the empty host label.
  { label: { host: "", status_class: "4xx" }, count: 3, send: c => c.send("unknown.test", "/") },
];

function delta(
  before: Sample[],
  after: Sample[],
  name: string,
  labels: Record<string, string>,
): number {
  return total(after, name, labels) - total(before, name, labels);
}

function accessLines(file: string, from: number): Record<string, unknown>[] {
  return readFileSync(file)
    .subarray(from)
    .toString("utf8")
    .split("\n")
    .filter(line => line.includes('"log":"access"'))
    .map(line => JSON.parse(line) as Record<string, unknown>);
}

describe("per-host metrics and access log end to end", () => {
  let space: TrafficNamespace;

  before(async () => {
    space = await openNamespace("traffic-metrics", ["web", "beta"]);
    await space.apply([
      ingress(space.ns, "metrics", { host: HOST, service: "web" }),
      ingress(space.ns, "metrics-moved", {
        host: MOVED,
        service: "web",
        annotations: { "nginx.ingress.kubernetes.io/temporal-redirect": "https://new.example/" },
      }),
      canary(space.ns, "metrics-beta", {
        host: HOST,
        service: "beta",
        annotations: { "canary-by-header": "X-Beta" },
      }),
    ]);
  });

  after(async () => {
    await space?.close();
  });

  for (const workers of [1, 2]) {
    describe(`with BULWARK_WORKERS=${workers}`, () => {
      let served: TrafficGateway;
      let gateway: RunningGateway;
      let client: Client;

      before(async () => {
        const env = { BULWARK_WORKERS: String(workers), BULWARK_ACCESS_LOG: "true" };
        served = await openGateway(space.ns, env, { host: HOST, backend: "web" });
        ({ gateway, client } = served);
        await waitUntil("the canary to serve", async () =>
          (await client.backend(HOST, "/", { "x-beta": "always" })) === "beta" ? true : undefined,
        );
      });

      after(async () => {
        await served?.close();
      });

      it("counts exactly the requests sent, by host, variant and status class, with durations and bytes", async () => {
        // The access log leaves in batches every 50 ms, then through a pipe to the file: read from
        // a line boundary (the file can end mid-line); a warm-up request's line can still land
        // after it, so only lines stamped later count. A line is stamped (in ms) when its request
        // ends, before its answer leaves: the warm-up's last one may share this millisecond, so
        // the plan starts in the next.
        const logFrom = await waitUntil("the log file to end at a line boundary", () => {
          const text = readFileSync(gateway.process.logFile);
          return text.length === 0 || text[text.length - 1] === 0x0a ? text.length : undefined;
        });
        const startedAt = Date.now() + 1;
        await waitUntil("the next millisecond", () => Date.now() >= startedAt);
        // A warm-up request is counted when its exchange ends, which can be after its answer
        // arrived: start from counts that two scrapes in a row agree on.
        let lastCount: number | undefined;
        const before = await waitUntil("the warm-up's counts to settle", async () => {
          const samples = await scrape(gateway.adminPort);
          const count = total(samples, REQUESTS, {});
          const settled = count === lastCount;
          lastCount = count;
          return settled ? samples : undefined;
        });
        let responseBytes = 0;
        // The plan's requests say who they are: a warm-up request's line may still be written
        // (and stamped) after the plan has started.
        const planClient = {
          send: (host: string, path: string, options: AskOptions = {}) =>
            client.send(host, path, {
              ...options,
              headers: { ...options.headers, "user-agent": PLAN_AGENT },
            }),
        } as Client;
        for (const { count, send } of PLAN) {
          // Concurrent, so several keep-alive connections (spread over the workers) carry them.
          const answers = await Promise.all(Array.from({ length: count }, () => send(planClient)));
          for (const a of answers)
            if (a.headers["x-backend"] !== undefined) responseBytes += Buffer.byteLength(a.body);
        }
        const after = await scrape(gateway.adminPort);

        const expected = new Map<string, number>();
        for (const { label, count } of PLAN) {
          const key = JSON.stringify(label);
          expected.set(key, (expected.get(key) ?? 0) + count);
        }
        for (const [key, count] of expected) {
          const labels = JSON.parse(key) as Record<string, string>;
          assert.equal(delta(before, after, REQUESTS, labels), count, key);
        }
        const sent = PLAN.reduce((sum, p) => sum + p.count, 0);
        assert.equal(delta(before, after, REQUESTS, {}), sent);
        assert.equal(
          delta(before, after, "bulwark_gateway_request_duration_seconds_count", {}),
          sent,
        );
        // Every request routed to a backend reached it: upstream time for all but the 404s.
        assert.equal(
          delta(before, after, "bulwark_gateway_upstream_duration_seconds_count", { host: HOST }),
          sent - 3,
        );
        assert.equal(
          delta(before, after, "bulwark_gateway_request_bytes_total", { host: HOST }),
          6 * BODY.length,
        );
        assert.equal(
          delta(before, after, "bulwark_gateway_response_bytes_total", { host: HOST }),
          responseBytes,
        );
        assert.equal(
          delta(before, after, REQUESTS, {
            host: HOST,
            ingress: `${space.ns}/metrics-beta`,
            service: `${space.ns}/beta`,
          }),
          7,
        );

        const lines = await waitUntil(
          "an access log line per request",
          async () => {
            const found = accessLines(gateway.process.logFile, logFrom).filter(
              l => Number(l.time) >= startedAt && l.user_agent === PLAN_AGENT,
            );
            return found.length >= sent ? found : undefined;
          },
          10_000,
        );
        assert.equal(lines.length, sent);
        const canaryLine = lines.find(l => l.variant === "canary");
        assert.equal(canaryLine?.host, HOST);
        assert.equal(canaryLine?.path, "/b");
        assert.equal(canaryLine?.status, 200);
        assert.equal(canaryLine?.decision, "header x-beta=always");
        assert.match(
          String(canaryLine?.upstream_addr),
          new RegExp(`:${space.backends.get("beta")?.port}$`),
        );
        assert.equal(canaryLine?.upstream_status, 200);
        assert.equal(typeof canaryLine?.upstream_response_time, "number");
        assert.match(String(canaryLine?.request_id), /^[0-9a-f]{32}$/);
        assert.match(String(canaryLine?.remote_addr), /^(\d+\.){3}\d+$|:/);
        assert.deepEqual([canaryLine?.protocol, canaryLine?.scheme], ["HTTP/1.1", "http"]);
        const unrouted = lines.find(l => l.host === "unknown.test");
        assert.deepEqual([unrouted?.status, unrouted?.upstream_status], [404, null]);
        assert.equal(typeof canaryLine?.duration_ms, "number");
        assert.equal(typeof canaryLine?.upstream_ms, "number");
        const pids = new Set(lines.map(l => l.pid));
        assert.equal(pids.size, workers, "every worker served and logged");
      });

      it("counts the gateway's own answers by host and decision", async () => {
        await waitUntil("the redirect to be served", async () =>
          (await client.send(MOVED, "/")).status === 302 ? true : undefined,
        );
        const before = await scrape(gateway.adminPort);
        for (let i = 0; i < 3; i++) assert.equal((await client.send(MOVED, "/x")).status, 302);
        const after = await scrape(gateway.adminPort);
        const answers = "bulwark_gateway_answers_total";
        assert.equal(
          delta(before, after, answers, { host: MOVED, decision: "temporal-redirect" }),
          3,
        );
        assert.equal(delta(before, after, answers, { host: HOST }), 0, "proxied: not an answer");
      });

      if (workers > 1) {
        it("keeps a killed worker's counts: the sums never go backwards", async () => {
          type Health = { dataPlane: { workers: { pid: number }[] } };
          const pidsOf = async () =>
            ((await gateway.health()) as unknown as Health).dataPlane.workers.map(w => w.pid);
          const before = await scrape(gateway.adminPort);
          assert.ok(total(before, REQUESTS, { host: HOST }) > 0, "requests were counted");
          const [victim] = await pidsOf();
          process.kill(victim!, "SIGKILL");
          await waitUntil("a replacement worker", async () => {
            const pids = await pidsOf();
            return pids.length === workers && !pids.includes(victim!) ? true : undefined;
          });
          const after = await scrape(gateway.adminPort);
          for (const name of [REQUESTS, "bulwark_gateway_request_duration_seconds_count"]) {
            assert.equal(delta(before, after, name, {}), 0, `${name}: no count lost or doubled`);
          }
        });
      }
    });
  }
});
