// The module's metrics registry, served on BULWARK_METRICS_PORT in the watcher process.
import type { Server } from "node:http";
import { Log } from "pepr";
import { Registry } from "prom-client";
import { serveMetrics } from "../../kube/metrics-server";

export const registry = new Registry();

let server: Server | undefined;

/** Serves `registry` on 0.0.0.0:`port` once; later calls are no-ops. */
export function serveModuleMetrics(port: number): void {
  server ??= serveMetrics(registry, port, "0.0.0.0", {
    info: (message, fields) => Log.info(fields, message),
    error: (message, fields) => Log.error(fields, message),
  });
}
