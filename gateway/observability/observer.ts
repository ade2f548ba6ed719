// The data plane's observer of finished requests: the per-host metrics and the JSON access log
// (one line per request on stdout, in batches), each switchable. With both off there is no observer
// and the proxy skips timing altogether.
import { createWriteStream } from "node:fs";
import { LineBatch } from "./line-batch";
import type { TrafficObserver } from "./tally";
import {
  accessLogLine,
  refusalLogLine,
  TrafficMetrics,
  type MetricJson,
  type RequestRecord,
} from "./traffic";

export interface ObserveOptions {
  /** Per-host Prometheus metrics (BULWARK_TRAFFIC_METRICS). */
  metrics: boolean;
  /** One JSON access log line per request (BULWARK_ACCESS_LOG). */
  accessLog: boolean;
  /** Where the access log goes instead of stdout (appended to); benchmarks use /dev/null. */
  accessLogPath?: string;
}

/** When the caller says nothing (tests, benchmarks): metrics on, no log lines on stdout. The
 * gateway process passes its settings, where both default to on. */
export const DEFAULT_OBSERVE: ObserveOptions = { metrics: true, accessLog: false };

/**
 * One JSON line per request (accessLogLine), batched rather than passed through a winston logger:
 * its stream pipeline measured about 35 µs per line, more than proxying the request
 * (hack/bench/README.md).
 */
class AccessLog {
  constructor(private readonly lines: LineBatch) {}

  write(record: RequestRecord): void {
    // pid tells the worker processes apart.
    this.lines.push(accessLogLine(record, process.pid, Date.now()));
  }

  writeRefusal(refusal: { status: number; reason: string }, client: string): void {
    this.lines.push(refusalLogLine(refusal, client, process.pid, Date.now()));
  }
}

export class TrafficObservers implements TrafficObserver {
  /** This process's traffic metrics (each worker has its own; the primary sums them). */
  readonly metrics: TrafficMetrics | undefined;
  private readonly log: AccessLog | undefined;
  private readonly lines: LineBatch | undefined;
  readonly logging: boolean;

  private constructor(options: ObserveOptions) {
    this.metrics = options.metrics ? new TrafficMetrics() : undefined;
    this.logging = options.accessLog;
    if (options.accessLog) {
      const path = options.accessLogPath;
      const out = path === undefined ? process.stdout : createWriteStream(path, { flags: "a" });
      this.lines = new LineBatch(out);
      this.log = new AccessLog(this.lines);
    }
  }

  /** Undefined when both are off: nothing to observe, nothing to time. */
  static create(options: ObserveOptions): TrafficObservers | undefined {
    return options.metrics || options.accessLog ? new TrafficObservers(options) : undefined;
  }

  /** The metrics in prom-client's JSON shape; none when metrics are off. */
  metricsJson(): MetricJson[] {
    return this.metrics?.toJSON() ?? [];
  }

  /** Writes the access log lines still gathered (on close). */
  flush(): void {
    this.lines?.flush();
  }

  observe(record: RequestRecord): void {
    this.metrics?.observe(record);
    this.log?.write(record);
  }

  /** A request the front door refused: counted by reason and logged. */
  refused(refusal: { status: number; reason: string }, client: string): void {
    this.metrics?.refused(refusal.reason);
    this.log?.writeRefusal(refusal, client);
  }
}
