// Entry of a data-plane worker process (node:cluster): one Engine, driven by the primary over IPC.
import cluster from "node:cluster";
import type { ProcessMetrics } from "./observability/scrape";
import { Engine, type EngineOptions } from "./proxy/engine";
import type { ProxyCounters } from "./proxy/forward";
import type { RouteTableStats } from "./routing/table";
import type { AppliedView } from "./view";
import { ViewReplica, type ViewDelta } from "./view-delta";

export type ToWorker =
  | { type: "init"; options: EngineOptions }
  | { type: "apply"; delta: ViewDelta }
  | { type: "metrics"; id: number }
  | { type: "close"; drainMs: number };

export type FromWorker =
  | { type: "listening-for-init" }
  | { type: "ready"; httpPort: number; httpsPort: number | undefined }
  | { type: "applied"; applied: AppliedView; table: RouteTableStats }
  | { type: "counters"; counters: ProxyCounters }
  | { type: "metrics"; id: number; metrics: ProcessMetrics }
  | { type: "failed"; message: string }
  /** A delta did not apply to this worker's replica: send the whole view. */
  | { type: "resync" };

const COUNTERS_MS = 1000;

function tell(message: FromWorker): void {
  process.send?.(message);
}

/** This worker's traffic metrics, read when the primary asks (a scrape), so none lag. */
function answerMetrics(engine: Engine | undefined, id: number): void {
  tell({ type: "metrics", id, metrics: engine?.observers?.metricsJson() ?? [] });
}

function runWorker(): void {
  let engine: Engine | undefined;
  const replica = new ViewReplica();
  process.on("message", (message: ToWorker) => {
    if (message.type === "init") {
      Engine.start(message.options).then(
        started => {
          engine = started;
          tell({ type: "ready", httpPort: started.httpPort, httpsPort: started.httpsPort });
          // The primary sums these for status(); once a second is plenty for metrics.
          setInterval(
            () => tell({ type: "counters", counters: { ...started.counters } }),
            COUNTERS_MS,
          ).unref();
        },
        (error: Error) => tell({ type: "failed", message: error.message }),
      );
    } else if (message.type === "apply" && engine !== undefined) {
      const view = replica.apply(message.delta);
      if (view === "resync") tell({ type: "resync" });
      else if (view !== "stale") {
        const applied = engine.apply(view);
        tell({ type: "applied", applied, table: engine.stats });
      }
    } else if (message.type === "metrics") {
      void answerMetrics(engine, message.id);
    } else if (message.type === "close") {
      const closing = engine?.close(message.drainMs) ?? Promise.resolve();
      void closing.finally(() => process.exit(0));
    }
  });
  // Messages sent before this listener existed were lost: ask for the settings now.
  tell({ type: "listening-for-init" });
  // The primary went away: nothing will drive this worker any more.
  process.on("disconnect", () => process.exit(0));
}

if (cluster.isWorker) runWorker();
