// The admin port: /healthz (always 200 while the process runs, with JSON detail), /readyz (200
// only while a good view serves and the gateway is not draining), /metrics (Prometheus).
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

export interface AdminSource {
  ready(): boolean;
  health(): Record<string, unknown>;
}

export interface AdminServer {
  readonly port: number;
  /** From now on /readyz says 503 (draining): the load balancer stops sending new clients. */
  drain(): void;
  close(): Promise<void>;
}

export async function startAdminServer(
  source: AdminSource,
  registry: Registry,
  listen: { port: number; host: string },
): Promise<AdminServer> {
  let draining = false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      const body = { status: "ok", draining, ...source.health() };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    if (path === "/readyz") {
      const ready = source.ready() && !draining;
      const reason = draining ? "draining" : ready ? "serving a good view" : "no good view yet";
      res.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(`${reason}\n`);
      return;
    }
    if (path === "/metrics") {
      registry.metrics().then(
        text => res.writeHead(200, { "content-type": registry.contentType }).end(text),
        error => res.writeHead(500).end(String(error)),
      );
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : listen.port;
  return {
    port,
    drain: () => void (draining = true),
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
