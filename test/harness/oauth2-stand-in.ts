// A stand-in for oauth2-proxy's auth endpoint, the external auth server ingress-nginx users put
// behind auth-url: `GET /oauth2/auth` answers 202 with X-Auth-Request-User and -Email for a known
// session (cookie `_oauth2_proxy` or `Authorization: Bearer`), 401 without one, 403 when
// `allowed_groups` leaves the user out. It behaves like a real one under trouble: latency, 500s,
// outages (connections refused, or accepted and never answered). Tests read every request it saw.
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import express, { type Request, type Response } from "express";

export interface Session {
  user: string;
  email: string;
  groups: string[];
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes the request carried. */
  bodyBytes: number;
}

export interface OAuth2StandInOptions {
  /** Delay before each answer. */
  delayMs?: number;
  /** Share of requests (0..1) answered 500, drawn from `random`. */
  errorRate?: number;
  random?: () => number;
  /** A Set-Cookie line on every 202 (oauth2-proxy refreshing its session cookie). */
  refreshCookie?: string;
  /** A Cache-Control header on every answer. */
  cacheControl?: string;
  /** Answer every request with this status instead (a misconfigured auth server). */
  forceStatus?: number;
}

export type AuthOutage = "refuse" | "hang" | false;

export interface OAuth2StandIn {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly seen: SeenRequest[];
  addSession(token: string, session: Session): void;
  configure(options: OAuth2StandInOptions): void;
  setOutage(mode: AuthOutage): Promise<void>;
  close(): Promise<void>;
}

function tokenOf(req: Request): string | undefined {
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (bearer !== undefined) return bearer;
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const [name, value] = pair.trim().split("=");
    if (name === "_oauth2_proxy" && value !== undefined) return value;
  }
  return undefined;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

export async function startOAuth2StandIn(port = 0): Promise<OAuth2StandIn> {
  const sessions = new Map<string, Session>();
  const seen: SeenRequest[] = [];
  let options: OAuth2StandInOptions = {};
  let outage: AuthOutage = false;
  const hung = new Set<Response>();
  const app = express();

  /** A misconfigured or failing server's answer; false when it answers normally. */
  const trouble = (res: Response): boolean => {
    const random = options.random ?? Math.random;
    if (options.forceStatus !== undefined) {
      res.status(options.forceStatus).end();
      return true;
    }
    if ((options.errorRate ?? 0) > 0 && random() < options.errorRate!) {
      res.status(500).send("internal error\n");
      return true;
    }
    return false;
  };

  const answer = (req: Request, res: Response): void => {
    if (options.cacheControl !== undefined) res.setHeader("Cache-Control", options.cacheControl);
    if (trouble(res)) return;
    const token = tokenOf(req);
    const session = token === undefined ? undefined : sessions.get(token);
    if (session === undefined) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="oauth2"');
      res.status(401).send("Unauthorized\n");
      return;
    }
    const allowed = typeof req.query.allowed_groups === "string" ? req.query.allowed_groups : "";
    if (allowed !== "" && !allowed.split(",").some(group => session.groups.includes(group))) {
      res.status(403).send("Forbidden\n");
      return;
    }
    res.setHeader("X-Auth-Request-User", session.user);
    res.setHeader("X-Auth-Request-Email", session.email);
    res.setHeader("X-Auth-Request-Groups", session.groups.join(","));
    if (options.refreshCookie !== undefined) res.setHeader("Set-Cookie", options.refreshCookie);
    res.status(202).send("Accepted\n");
  };

  app.all("/oauth2/auth", (req, res) => {
    let bodyBytes = 0;
    req.on("data", (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on("end", () => {
      seen.push({
        method: req.method,
        url: req.originalUrl,
        headers: { ...req.headers },
        bodyBytes,
      });
      if (outage === "hang") {
        hung.add(res);
        res.once("close", () => hung.delete(res));
        return;
      }
      setTimeout(() => answer(req, res), options.delayMs ?? 0);
    });
  });

  const sockets = new Set<Socket>();
  const serve = (): Server => {
    const server = createServer(app);
    server.on("connection", socket => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    return server;
  };
  const real = serve();
  const bound = await listen(real, port);
  let current: Server | undefined = real;

  const stop = async (): Promise<void> => {
    const s = current;
    current = undefined;
    if (s === undefined) return;
    for (const res of hung) res.destroy();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>(resolve => s.close(() => resolve()));
  };

  return {
    port: bound,
    origin: `http://127.0.0.1:${bound}`,
    seen,
    addSession: (token, session) => sessions.set(token, session),
    configure: next => (options = next),
    async setOutage(mode) {
      if (mode === "refuse") {
        await stop();
      } else if (current === undefined) {
        const again = serve();
        await listen(again, bound);
        current = again;
      }
      outage = mode === "hang" ? "hang" : false;
    },
    close: stop,
  };
}
