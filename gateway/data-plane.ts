// The gateway's data plane: HTTP and HTTPS listeners that route on the request head and stream to
// upstream endpoints. The control side hands it a GatewayView; `apply` compiles it and swaps one
// reference, in every worker process, and resolves once all of them serve that version.
//
//   const dp = await startDataPlane({ httpPort: 8080, httpsPort: 8443, host: "127.0.0.1", workers: 2 });
//   const applied = await dp.apply(view);   // { version, problems }
//   dp.status();                            // { version, workers: [{ pid, version }], ... }
//   await dp.close({ drainMs: 10_000 });
//
// One worker serves in this process. Several are node:cluster workers sharing the listeners; each
// keeps a replica of the view, gets what changed over IPC (view-delta.ts) and compiles it itself.
import cluster, { type Worker } from "node:cluster";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ObserveOptions } from "./observability/observer";
import { sumMetrics, type ProcessMetrics } from "./observability/scrape";
import { Engine } from "./proxy/engine";
import type { ProxyCounters } from "./proxy/forward";
import type { FrontDoorLimits } from "./proxy/request-rules";
import { DEFAULT_COMPILE_OPTIONS, type CompileOptions } from "./routing/compile";
import { DEFAULT_LIMIT_OPTIONS } from "./policy/limits";
import type { RouteTableStats } from "./routing/table";
import { makeDefaultCertificates, type PemPair } from "./tls/default-certificate";
import type { AppliedView, GatewayView } from "./view";
import { diffView, wholeView } from "./view-delta";
import { effectiveListenMode, type ListenMode } from "./listen-mode";
import type { FromWorker, ToWorker } from "./data-plane-worker";

export interface DataPlaneOptions {
  /** HTTP listener port; 0 picks a free one (see DataPlane.httpPort). */
  httpPort: number;
  /** HTTPS listener port; 0 picks a free one; undefined for no HTTPS listener. */
  httpsPort?: number;
  /** Address to listen on (default "0.0.0.0"). */
  host?: string;
  /** Worker processes; 1 (the default) serves in this process. */
  workers?: number;
  /** Certificates for unknown server names; default: a self-signed ECDSA + RSA pair made now. */
  defaultCertificates?: PemPair[];
  /** Canary cap and traffic policy settings (default: Tengine's cap of 20, redirects to 443). */
  compile?: CompileOptions;
  /** Per-host metrics and access log switches (default: metrics on, access log off). */
  observe?: ObserveOptions;
  /** The front door's deadlines and limits (default: nginx's). */
  frontDoor?: FrontDoorLimits;
  /**
   * How several workers share the ports (listen-mode.ts; default round robin through this
   * process); reuse-port falls back to round robin on a Node.js without it.
   */
  listenMode?: ListenMode;
  /**
   * Every HTTP/2 stream takes Node's path (the raw-pool path of h2/exchange.ts off): for the
   * differential tests that compare both on the same requests.
   */
  h2NodePathOnly?: boolean;
}

export interface WorkerStatus {
  /** Process id of the worker (this process when workers = 1). */
  pid: number;
  /** The view version it serves; undefined before the first apply. */
  version: number | undefined;
}

export interface DataPlaneStatus {
  /** The version every worker serves; undefined before the first apply or while switching. */
  version: number | undefined;
  workers: WorkerStatus[];
  /** Problems of the last applied view (routes or certificates left out). */
  problems: string[];
  httpPort: number;
  httpsPort: number | undefined;
  /** Size of the served table; undefined before the first apply. */
  table: RouteTableStats | undefined;
  /** Requests, retries, upstream errors and timeouts since start, all workers summed (workers
   * report once a second, so with several workers the sums lag by up to a second). */
  counters: ProxyCounters;
}

export interface DataPlane {
  readonly httpPort: number;
  readonly httpsPort: number | undefined;
  /** Compiles and swaps in the view; resolves when every worker serves `view.version`. */
  apply(view: GatewayView): Promise<AppliedView>;
  status(): DataPlaneStatus;
  /**
   * The per-host traffic metrics of every serving process, read now (one list per process), so a
   * scrape counts every request answered before it.
   */
  trafficMetrics(): Promise<ProcessMetrics[]>;
  /** Stops accepting, lets in-flight requests finish for up to drainMs (default 10 s), closes the rest. */
  close(options?: { drainMs?: number }): Promise<void>;
}

class LocalDataPlane implements DataPlane {
  constructor(private readonly engine: Engine) {}

  get httpPort(): number {
    return this.engine.httpPort;
  }

  get httpsPort(): number | undefined {
    return this.engine.httpsPort;
  }

  apply(view: GatewayView): Promise<AppliedView> {
    return Promise.resolve(this.engine.apply(view));
  }

  status(): DataPlaneStatus {
    const version = this.engine.version;
    return {
      version,
      workers: [{ pid: process.pid, version }],
      problems: this.engine.lastProblems,
      httpPort: this.httpPort,
      httpsPort: this.httpsPort,
      table: version === undefined ? undefined : this.engine.stats,
      counters: { ...this.engine.counters, refused: { ...this.engine.counters.refused } },
    };
  }

  trafficMetrics(): Promise<ProcessMetrics[]> {
    const observers = this.engine.observers;
    return Promise.resolve(observers === undefined ? [] : [observers.metricsJson()]);
  }

  close(options?: { drainMs?: number }): Promise<void> {
    return this.engine.close(options?.drainMs);
  }
}

interface WorkerState {
  worker: Worker;
  version: number | undefined;
  counters: ProxyCounters | undefined;
}

/** A worker that does not answer a metrics request within this is left out of that scrape. */
const METRICS_ANSWER_MS = 2000;

interface PendingApply {
  version: number;
  waiting: Set<number>;
  problems: string[] | undefined;
  resolve: (applied: AppliedView) => void;
  reject: (error: Error) => void;
}

const WORKER_FILE = join(
  __dirname,
  `data-plane-worker${__filename.endsWith(".ts") ? ".ts" : ".js"}`,
);

function workerExecArgv(): string[] {
  if (!WORKER_FILE.endsWith(".ts") || process.execArgv.some(a => a.includes("tsx"))) {
    return process.execArgv;
  }
  return [...process.execArgv, "--import", pathToFileURL(require.resolve("tsx")).href];
}

class ClusterDataPlane implements DataPlane {
  private readonly workers = new Map<number, WorkerState>();
  private readonly pending = new Set<PendingApply>();
  /** Metrics requests in flight: id → the handler gathering that scrape's answers by worker. */
  private readonly metricsWanted = new Map<
    number,
    (worker: number, metrics: ProcessMetrics) => void
  >();
  private metricsRequests = 0;
  /** The last view sent to the workers: the next delta's base. */
  private latest: GatewayView | undefined;
  private problems: string[] = [];
  private table: RouteTableStats | undefined = undefined;
  /**
   * Traffic metrics of workers that died, as of their last answer, so the summed counters never
   * go backwards (Prometheus would read a drop as a reset and count everything again); what a
   * worker counted after its last answer is lost with it.
   */
  private retiredMetrics: ProcessMetrics | undefined = undefined;
  /** Each live worker's last metrics answer. */
  private readonly lastMetrics = new Map<number, ProcessMetrics>();
  /** Counters of workers that died, so the sums never go backwards. */
  private readonly retired: ProxyCounters = {
    requests: 0,
    retries: 0,
    upstreamErrors: 0,
    timeouts: 0,
    refused: {},
  };
  private closing = false;
  httpPort = 0;
  httpsPort: number | undefined = undefined;

  constructor(
    private init: Extract<ToWorker, { type: "init" }>,
    private readonly count: number,
  ) {}

  async start(): Promise<void> {
    cluster.setupPrimary({
      exec: WORKER_FILE,
      execArgv: workerExecArgv(),
      serialization: "advanced",
    });
    const ready = [];
    if (this.init.options.reusePort === true) {
      // Each worker binds its own socket: the first picks the ports (0 = any free one), and
      // every later worker, replacements included, binds the same ones.
      await this.fork();
      const { options } = this.init;
      this.init = { ...this.init, options: { ...options, httpPort: this.httpPort } };
      if (options.httpsPort !== undefined) this.init.options.httpsPort = this.httpsPort;
    } else ready.push(this.fork());
    for (let i = 1; i < this.count; i++) ready.push(this.fork());
    await Promise.all(ready);
  }

  apply(view: GatewayView): Promise<AppliedView> {
    const delta = diffView(this.latest, view);
    this.latest = view;
    return new Promise((resolve, reject) => {
      const pending: PendingApply = {
        version: view.version,
        waiting: new Set(this.workers.keys()),
        problems: undefined,
        resolve,
        reject,
      };
      this.pending.add(pending);
      for (const state of this.workers.values()) send(state.worker, { type: "apply", delta });
    });
  }

  status(): DataPlaneStatus {
    const workers = [...this.workers.values()].map(s => ({
      pid: s.worker.process.pid ?? 0,
      version: s.version,
    }));
    const versions = new Set(workers.map(w => w.version));
    return {
      version: versions.size === 1 ? workers[0]?.version : undefined,
      workers,
      problems: this.problems,
      httpPort: this.httpPort,
      httpsPort: this.httpsPort,
      table: this.table,
      counters: this.sumCounters(),
    };
  }

  trafficMetrics(): Promise<ProcessMetrics[]> {
    const id = ++this.metricsRequests;
    const waiting = new Set(this.workers.keys());
    const answers: ProcessMetrics[] = [];
    return new Promise(resolve => {
      const done = () => {
        clearTimeout(timer);
        this.metricsWanted.delete(id);
        resolve(this.retiredMetrics === undefined ? answers : [...answers, this.retiredMetrics]);
      };
      const timer = setTimeout(done, METRICS_ANSWER_MS);
      this.metricsWanted.set(id, (worker, metrics) => {
        if (!waiting.delete(worker)) return;
        answers.push(metrics);
        if (waiting.size === 0) done();
      });
      if (waiting.size === 0) done();
      for (const { worker } of this.workers.values()) send(worker, { type: "metrics", id });
    });
  }

  private sumCounters(): ProxyCounters {
    const sum = { ...this.retired, refused: { ...this.retired.refused } };
    for (const { counters } of this.workers.values())
      if (counters !== undefined) addCounters(sum, counters);
    return sum;
  }

  async close(options?: { drainMs?: number }): Promise<void> {
    this.closing = true;
    const drainMs = options?.drainMs ?? 10_000;
    const exits = [...this.workers.values()].map(({ worker }) => {
      return new Promise<void>(resolve => {
        if (worker.isDead()) return resolve();
        worker.once("exit", () => resolve());
        send(worker, { type: "close", drainMs });
        // A worker that does not finish its drain in time is stopped.
        setTimeout(() => worker.isDead() || worker.kill("SIGKILL"), drainMs + 5_000).unref();
      });
    });
    await Promise.all(exits);
    for (const pending of this.pending) pending.reject(new Error("the data plane closed"));
    this.pending.clear();
  }

  private fork(): Promise<void> {
    const worker = cluster.fork();
    const state: WorkerState = { worker, version: undefined, counters: undefined };
    this.workers.set(worker.id, state);
    return new Promise((resolve, reject) => {
      worker.on("message", (message: FromWorker) => {
        if (message.type === "listening-for-init") {
          send(worker, this.init);
        } else if (message.type === "ready") {
          this.httpPort = message.httpPort;
          this.httpsPort = message.httpsPort;
          this.sendWhole(worker);
          resolve();
        } else if (message.type === "resync") {
          this.sendWhole(worker);
        } else if (message.type === "applied") {
          this.table = message.table;
          this.onApplied(state, message.applied);
        } else if (message.type === "counters") {
          state.counters = message.counters;
        } else if (message.type === "metrics") {
          this.lastMetrics.set(worker.id, message.metrics);
          this.metricsWanted.get(message.id)?.(worker.id, message.metrics);
        } else if (message.type === "failed") {
          reject(new Error(`gateway worker ${worker.process.pid ?? "?"}: ${message.message}`));
        }
      });
      worker.once("exit", code => {
        this.onExit(worker.id);
        reject(new Error(`gateway worker exited with ${code} before listening`));
      });
    });
  }

  /** The latest view, whole: for a worker that has none, or whose replica lost track. */
  private sendWhole(worker: Worker): void {
    if (this.latest !== undefined) send(worker, { type: "apply", delta: wholeView(this.latest) });
  }

  private onApplied(state: WorkerState, applied: AppliedView): void {
    state.version = applied.version;
    for (const pending of this.pending) {
      if (applied.version < pending.version) continue;
      pending.waiting.delete(state.worker.id);
      if (applied.version === pending.version) pending.problems ??= applied.problems;
      this.settle(pending);
    }
  }

  private settle(pending: PendingApply): void {
    if (pending.waiting.size > 0) return;
    this.pending.delete(pending);
    if (pending.problems !== undefined) this.problems = pending.problems;
    pending.resolve({ version: pending.version, problems: pending.problems ?? this.problems });
  }

  private onExit(id: number): void {
    const counters = this.workers.get(id)?.counters;
    if (counters !== undefined) addCounters(this.retired, counters);
    const metrics = this.lastMetrics.get(id);
    this.lastMetrics.delete(id);
    if (metrics !== undefined) {
      this.retiredMetrics = sumMetrics([
        ...(this.retiredMetrics ? [this.retiredMetrics] : []),
        metrics,
      ]);
    }
    this.workers.delete(id);
    for (const pending of this.pending) {
      pending.waiting.delete(id);
      this.settle(pending);
    }
    // A worker that died while serving is replaced; it gets the latest view once listening.
    if (!this.closing) this.fork().catch(() => undefined);
  }
}

function addCounters(into: ProxyCounters, from: ProxyCounters): void {
  into.requests += from.requests;
  into.retries += from.retries;
  into.upstreamErrors += from.upstreamErrors;
  into.timeouts += from.timeouts;
  for (const [reason, count] of Object.entries(from.refused)) {
    into.refused[reason] = (into.refused[reason] ?? 0) + count;
  }
}

function send(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message);
}

/**
 * Each worker enforces 1/workers of every rate limit: new connections are spread evenly among
 * them (the primary's round robin, or the kernel's address hash with reuse-port), so a pod's
 * total stays the configured one (README, "Migrating").
 */
function withLimitShare(compile: CompileOptions, workers: number): CompileOptions {
  const limits = { ...(compile.traffic.limits ?? DEFAULT_LIMIT_OPTIONS), share: workers };
  return { ...compile, traffic: { ...compile.traffic, limits } };
}

/** Starts the listeners (in this process, or in `workers` cluster workers) with no routes yet. */
export async function startDataPlane(options: DataPlaneOptions): Promise<DataPlane> {
  const defaultCertificates = options.defaultCertificates ?? (await makeDefaultCertificates());
  const workers = options.workers ?? 1;
  const engineOptions = {
    httpPort: options.httpPort,
    httpsPort: options.httpsPort,
    host: options.host ?? "0.0.0.0",
    defaultCertificates,
    compile: withLimitShare(options.compile ?? DEFAULT_COMPILE_OPTIONS, workers),
    observe: options.observe,
    frontDoor: options.frontDoor,
    reusePort:
      workers > 1 && effectiveListenMode(options.listenMode ?? "round-robin") === "reuse-port",
    h2NodePathOnly: options.h2NodePathOnly,
  };
  if (workers <= 1) return new LocalDataPlane(await Engine.start(engineOptions));
  const plane = new ClusterDataPlane({ type: "init", options: engineOptions }, workers);
  await plane.start();
  return plane;
}

export type { AppliedView, GatewayView } from "./view";
export type { PemPair } from "./tls/default-certificate";
