// The daemon's HTTP server (I/O, express):
//   PUT /result     a peer's signed row → 200, or 400/401/403/409/422 with {accepted:false, reason}
//   GET /healthz    this daemon is up (what the peers' daemon check calls)
//   GET /localinfo  this daemon's view: group, and per checked node the tally, writer and record
import express, { type NextFunction, type Request, type Response } from "express";
import type { Server } from "node:http";
import type { EdgeDaemon } from "./daemon";

export function makeApp(daemon: EdgeDaemon): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.put("/result", express.json({ limit: "256kb" }), (req: Request, res: Response) => {
    const reply = daemon.receive(req.body, req.socket.remoteAddress);
    res.status(reply.status).json(reply.body);
  });
  app.get("/healthz", (_req: Request, res: Response) => {
    res.json({ ok: true, round: daemon.round });
  });
  app.get("/localinfo", (_req: Request, res: Response) => {
    res.json({ ...daemon.view(), stats: daemon.stats });
  });
  // A body that is not JSON at all: the same shape as every other rejection.
  app.use(
    (
      error: { status?: number; message?: string },
      _req: Request,
      res: Response,
      next: NextFunction,
    ) => {
      if (res.headersSent) return next(error);
      res
        .status(error.status ?? 500)
        .json({ accepted: false, reason: "malformed", detail: error.message ?? "bad request" });
    },
  );
  return app;
}

export function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, error => (error ? reject(error) : resolve(server)));
    server.keepAliveTimeout = 65_000;
  });
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise(resolve => server.close(() => resolve()));
}
