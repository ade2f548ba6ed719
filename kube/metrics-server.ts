// A Prometheus endpoint for a registry of ours: the Pepr module's (Pepr's own /metrics registry is
// private) and the edge daemon's. Pepr-free; the caller passes its logger.
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

export interface MetricsServerLog {
  info(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

/** Serves `registry` at GET /metrics on `host`:`port`; everything else is 404. */
export function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
  log: MetricsServerLog,
): Server {
  const server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      body => res.writeHead(200, { "content-type": registry.contentType }).end(body),
      error => res.writeHead(500).end(String(error)),
    );
  });
  server.on("error", error => log.error("the metrics server failed", { port, err: String(error) }));
  server.listen(port, host, () => log.info("serving Bulwark metrics", { port, host }));
  return server;
}
