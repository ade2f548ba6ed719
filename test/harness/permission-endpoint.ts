// A minimal permission endpoint for tests, until the permission server issue lands: it records
// every revoke call and can be told to fail the next N, as a real authorization API sometimes does.
import express from "express";
import type { Server } from "node:http";

export interface RevokeCall {
  uid: string;
  ip: string;
  namespace?: string;
  pod?: string;
  permissions: { name: string }[];
  answeredStatus: number;
}

export async function startPermissionEndpoint(): Promise<{
  url: string;
  close: () => Promise<void>;
}> {
  const calls: RevokeCall[] = [];
  let failNext = 0;
  const app = express();
  app.use(express.json());
  app.post("/v1/revoke", (req, res) => {
    const status = failNext > 0 ? 503 : 200;
    if (failNext > 0) failNext--;
    calls.push({ ...req.body, answeredStatus: status });
    res
      .status(status)
      .json(status === 200 ? { revoked: true } : { error: "authorization API unavailable" });
  });
  app.post("/_test/fail", (req, res) => {
    failNext = Number(req.query.count ?? 1);
    res.json({ failNext });
  });
  app.get("/_test/calls", (_req, res) => res.json(calls));
  const server: Server = await new Promise(resolve => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise(r => server.close(() => r())),
  };
}
