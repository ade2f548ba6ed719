// The stand-in authorization API: our own server implementing the http provider's REST contract
// (permission-server/providers/README.md) the way a real company API behaves: slow grants (jobs
// pending for a while), random 5xx, a rate limit answered with 429 + Retry-After, outages, and
// parameters it refuses forever. Tests and benchmarks read what it saw: granted (ip, permission)
// pairs, revocations, request counts and the peak QPS that reached it.
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";

export interface AuthzApiOptions {
  /** Accept `Authorization: Bearer <token>`. With `basic` too, either is accepted. */
  token?: string;
  basic?: { username: string; password: string };
  /** How long a grant job stays pending; 0 grants at once. */
  grantLatencyMs?: number;
  /** Extra delay before every answer. */
  responseDelayMs?: number;
  /** Share of requests (0..1) answered 500, drawn from `random`. */
  errorRate?: number;
  /** Requests accepted per sliding second; more get 429 with Retry-After. */
  rateLimitQps?: number;
  random?: () => number;
  /** Listen on this port (127.0.0.1); a free one by default. */
  port?: number;
}

/**
 * - `refuse`: the port is closed and open connections are cut (connection refused).
 * - `unavailable`: every request gets 503 with Retry-After.
 * - `hang`: requests are accepted and never answered (clients time out).
 */
export type OutageMode = "refuse" | "unavailable" | "hang";

export interface GrantedPermission {
  ip: string;
  resource: string;
  action: string;
  port?: number;
  podUid?: string;
  jobId: string;
}

export interface Revocation {
  ip: string;
  resource: string;
  action: string;
  port?: number;
  /** Whether a grant or a pending job was there to remove. */
  removed: boolean;
}

export interface AuthzApiStats {
  /** Every request that reached the server, answered or not. */
  requests: number;
  byStatus: Record<number, number>;
  grantsPosted: number;
  polls: number;
  revocations: number;
  /** Most requests that arrived in any one-second (half-open) interval. */
  peakQps: number;
}

export interface AuthzApi {
  url: string;
  port: number;
  /** Changes options at run time (latency, error rate, rate limit, credentials). */
  configure(options: Partial<AuthzApiOptions>): void;
  /** Starts (`mode`) or ends (`false`) an outage. */
  setOutage(mode: OutageMode | false): Promise<void>;
  /**
   * Makes a parameter permanently wrong: grant jobs whose resource (and action, if given) match
   * end `denied` with `reason`; with `reject: true` the POST itself answers 422.
   */
  deny(match: { resource: string; action?: string }, reason?: string, reject?: boolean): void;
  /** Ends every `deny` for this resource (the parameter was fixed on the backend's side). */
  allow(resource: string): void;
  /** Active grants: granted and not revoked. */
  granted(): GrantedPermission[];
  isGranted(ip: string, resource: string, action?: string): boolean;
  /** Every grant that ever completed, in order (a re-grant after a revoke appears again). */
  grantHistory(): GrantedPermission[];
  revocations(): Revocation[];
  stats(): AuthzApiStats;
  /** Zeroes the counters and the peak (grants and revocations stay). */
  resetStats(): void;
  /** Forgets every job (as a backend that lost its queue), keeping active grants. */
  forgetJobs(): void;
  close(): Promise<void>;
}

interface Job {
  id: string;
  key: string;
  grant: GrantedPermission;
  readyAt: number;
  state: "pending" | "granted" | "denied";
  reason?: string;
}

interface DenyRule {
  resource: string;
  action?: string;
  reason: string;
  reject: boolean;
}

/** Arrival times in the last second, and the largest count seen. */
class PeakCounter {
  private readonly recent: number[] = [];
  peak = 0;
  record(now: number): void {
    while (this.recent.length > 0 && (this.recent[0] as number) <= now - 1000) this.recent.shift();
    this.recent.push(now);
    this.peak = Math.max(this.peak, this.recent.length);
  }
  reset(): void {
    this.recent.length = 0;
    this.peak = 0;
  }
  count(now: number): number {
    while (this.recent.length > 0 && (this.recent[0] as number) <= now - 1000) this.recent.shift();
    return this.recent.length;
  }
}

const keyOf = (p: { ip: string; resource: string; action: string; port?: number }): string =>
  `${p.ip}|${p.resource}|${p.action}|${p.port ?? "*"}`;

function parsePermission(body: unknown): Omit<GrantedPermission, "jobId"> | string {
  if (typeof body !== "object" || body === null) return "body must be a JSON object";
  const b = body as Record<string, unknown>;
  for (const field of ["ip", "resource", "action"]) {
    if (typeof b[field] !== "string" || b[field] === "") return `${field} is required`;
  }
  if (b.port !== undefined && typeof b.port !== "number") return "port must be a number";
  const pod = b.pod as { uid?: unknown } | undefined;
  return {
    ip: b.ip as string,
    resource: b.resource as string,
    action: b.action as string,
    ...(typeof b.port === "number" ? { port: b.port } : {}),
    ...(typeof pod?.uid === "string" ? { podUid: pod.uid } : {}),
  };
}

class AuthzState {
  options: AuthzApiOptions;
  outage: OutageMode | false = false;
  readonly jobs = new Map<string, Job>();
  readonly jobsByKey = new Map<string, Job>();
  readonly active = new Map<string, GrantedPermission>();
  readonly history: GrantedPermission[] = [];
  readonly revoked: Revocation[] = [];
  readonly denyRules: DenyRule[] = [];
  readonly hung = new Set<Response>();
  readonly timers = new Set<NodeJS.Timeout>();
  readonly arrivals = new PeakCounter();
  readonly accepted = new PeakCounter();
  readonly stats: AuthzApiStats = {
    requests: 0,
    byStatus: {},
    grantsPosted: 0,
    polls: 0,
    revocations: 0,
    peakQps: 0,
  };

  constructor(options: AuthzApiOptions) {
    this.options = options;
  }

  denyRuleFor(p: { resource: string; action: string }): DenyRule | undefined {
    return this.denyRules.find(
      r => r.resource === p.resource && (r.action === undefined || r.action === p.action),
    );
  }

  /** Moves a pending job on when its time has come. */
  settle(job: Job, now: number): Job {
    if (job.state !== "pending" || now < job.readyAt) return job;
    const rule = this.denyRuleFor(job.grant);
    if (rule) {
      job.state = "denied";
      job.reason = rule.reason;
      this.jobsByKey.delete(job.key);
      return job;
    }
    job.state = "granted";
    this.active.set(job.key, job.grant);
    this.history.push(job.grant);
    return job;
  }

  authorized(header: string | undefined): boolean {
    const { token, basic } = this.options;
    if (token === undefined && basic === undefined) return true;
    if (token !== undefined && header === `Bearer ${token}`) return true;
    if (basic === undefined) return false;
    const pair = Buffer.from(`${basic.username}:${basic.password}`).toString("base64");
    return header === `Basic ${pair}`;
  }
}

const jobBody = (job: Job) => ({
  id: job.id,
  state: job.state,
  ...(job.reason === undefined ? {} : { reason: job.reason }),
});

function grantRoute(state: AuthzState) {
  return (req: Request, res: Response): void => {
    state.stats.grantsPosted++;
    const permission = parsePermission(req.body);
    if (typeof permission === "string") {
      res.status(400).json({ error: permission });
      return;
    }
    const rule = state.denyRuleFor(permission);
    if (rule?.reject) {
      res.status(422).json({ error: rule.reason });
      return;
    }
    const key = keyOf(permission);
    const now = Date.now();
    const existing = state.jobsByKey.get(key);
    if (existing) {
      res.status(200).json(jobBody(state.settle(existing, now)));
      return;
    }
    const id = randomUUID();
    const latency = state.options.grantLatencyMs ?? 0;
    const job: Job = {
      id,
      key,
      grant: { ...permission, jobId: id },
      readyAt: now + latency,
      state: "pending",
    };
    state.jobs.set(id, job);
    state.jobsByKey.set(key, job);
    if (latency > 0) {
      // A real backend finishes the job whether or not anyone polls it.
      const timer = setTimeout(() => {
        state.timers.delete(timer);
        if (state.jobs.get(id) === job) state.settle(job, job.readyAt);
      }, latency);
      state.timers.add(timer);
    }
    res.status(202).json(jobBody(state.settle(job, now)));
  };
}

function revokeRoute(state: AuthzState) {
  return (req: Request, res: Response): void => {
    state.stats.revocations++;
    const permission = parsePermission(req.body);
    if (typeof permission === "string") {
      res.status(400).json({ error: permission });
      return;
    }
    const key = keyOf(permission);
    const job = state.jobsByKey.get(key);
    const removed = state.active.delete(key) || job !== undefined;
    state.jobsByKey.delete(key);
    if (job) state.jobs.delete(job.id);
    const { ip, resource, action, port } = permission;
    state.revoked.push({ ip, resource, action, ...(port === undefined ? {} : { port }), removed });
    res.status(200).json({ revoked: removed });
  };
}

/** Answers 429 above the rate limit or an injected 500; true when it answered. */
function refusedByLoad(state: AuthzState, res: Response): boolean {
  const limit = state.options.rateLimitQps;
  if (limit !== undefined && state.accepted.count(performance.now()) >= limit) {
    res
      .status(429)
      .set("retry-after", "1")
      .json({ error: `rate limit ${limit}/s exceeded` });
    return true;
  }
  state.accepted.record(performance.now());
  const random = state.options.random ?? Math.random;
  const errorRate = state.options.errorRate ?? 0;
  if (errorRate > 0 && random() < errorRate) {
    res.status(500).json({ error: "internal error (injected)" });
    return true;
  }
  return false;
}

/** Outages, auth, rate limit and injected errors, before any route. */
function gate(state: AuthzState) {
  return (req: Request, res: Response, next: NextFunction): void => {
    state.stats.requests++;
    state.arrivals.record(performance.now());
    state.stats.peakQps = state.arrivals.peak;
    res.on("finish", () => {
      state.stats.byStatus[res.statusCode] = (state.stats.byStatus[res.statusCode] ?? 0) + 1;
    });
    if (state.outage === "hang") {
      state.hung.add(res); // answered only when the outage ends
      return;
    }
    if (state.outage === "unavailable") {
      res.status(503).set("retry-after", "5").json({ error: "maintenance: the API is down" });
      return;
    }
    if (!state.authorized(req.get("authorization"))) {
      res.status(401).json({ error: "missing or wrong credentials" });
      return;
    }
    if (refusedByLoad(state, res)) return;
    const delay = state.options.responseDelayMs ?? 0;
    if (delay > 0) setTimeout(next, delay);
    else next();
  };
}

function buildApp(state: AuthzState) {
  const app = express();
  app.use(gate(state));
  app.use(express.json());
  app.post("/v1/grants", grantRoute(state));
  app.get("/v1/grants/:id", (req, res) => {
    state.stats.polls++;
    const job = state.jobs.get(String(req.params.id));
    if (!job) {
      res.status(404).json({ error: `no job ${req.params.id}` });
      return;
    }
    res.status(200).json(jobBody(state.settle(job, Date.now())));
  });
  app.post("/v1/revocations", revokeRoute(state));
  return app;
}

async function listen(app: express.Express, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, "127.0.0.1", error =>
      error ? reject(error) : resolve(server),
    );
  });
}

export async function startAuthzApi(options: AuthzApiOptions = {}): Promise<AuthzApi> {
  const state = new AuthzState({ ...options });
  const app = buildApp(state);
  let server: Server | undefined = await listen(app, options.port ?? 0);
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("authz-api: no TCP address");
  const port = address.port;
  const sockets = new Set<Socket>();
  const track = (s: Server): void => {
    s.on("connection", socket => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
  };
  track(server);

  // Requests held by a `hang` outage get a 503 when it ends (if their clients still listen).
  const answerHung = (): void => {
    for (const res of state.hung) {
      if (!res.headersSent && !res.destroyed) res.status(503).json({ error: "outage ended" });
    }
    state.hung.clear();
  };

  const shutdown = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise<void>(resolve => s.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    configure: next => Object.assign(state.options, next),
    async setOutage(mode) {
      const wasRefusing = state.outage === "refuse";
      state.outage = mode;
      if (mode === "refuse" && !wasRefusing) await shutdown();
      if (mode !== "refuse" && wasRefusing) {
        server = await listen(app, port);
        track(server);
      }
      if (mode !== "hang") answerHung();
    },
    deny(match, reason = `${match.resource} cannot be granted: no such resource`, reject = false) {
      state.denyRules.push({ ...match, reason, reject });
    },
    allow(resource) {
      const kept = state.denyRules.filter(rule => rule.resource !== resource);
      state.denyRules.splice(0, state.denyRules.length, ...kept);
    },
    granted: () => [...state.active.values()],
    isGranted: (ip, resource, action) =>
      [...state.active.values()].some(
        g =>
          g.ip === ip && g.resource === resource && (action === undefined || g.action === action),
      ),
    grantHistory: () => [...state.history],
    revocations: () => [...state.revoked],
    stats: () => ({ ...state.stats, byStatus: { ...state.stats.byStatus } }),
    resetStats() {
      Object.assign(state.stats, {
        requests: 0,
        byStatus: {},
        grantsPosted: 0,
        polls: 0,
        revocations: 0,
        peakQps: 0,
      });
      state.arrivals.reset();
    },
    forgetJobs() {
      state.jobs.clear();
      state.jobsByKey.clear();
    },
    async close() {
      for (const timer of state.timers) clearTimeout(timer);
      state.timers.clear();
      answerHung();
      await shutdown();
    },
  };
}
