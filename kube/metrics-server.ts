// Bulwark's own Prometheus endpoint inside the Pepr watcher: Pepr's /metrics registry is private,
// so the module's metrics are served from a registry of ours on BULWARK_METRICS_PORT.
import { createServer, type Server } from "node:http";
import { Registry } from "prom-client";
import { Log } from "pepr";

export const registry = new Registry();

let server: Server | undefined;

/** Serves `registry` on 127.0.0.1/0.0.0.0:`port` once; later calls are no-ops. */
export function serveMetrics(port: number, host = "0.0.0.0"): void {
  if (server) return;
  server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      body => res.writeHead(200, { "content-type": registry.contentType }).end(body),
      error => res.writeHead(500).end(String(error)),
    );
  });
  server.on("error", error => Log.error({ port, err: String(error) }, "the metrics server failed"));
  server.listen(port, host, () => Log.info({ port }, "serving Bulwark metrics"));
}
