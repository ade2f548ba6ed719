// One keep-alive pool (an http.Agent, an https.Agent for TLS upstreams) per upstream endpoint and
// TLS identity, kept across views: a swap that keeps an endpoint keeps its warm connections.
// Endpoints a new view no longer names lose their idle connections at once; busy ones finish and
// then time out of the pool.
import { Agent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { poolKey, type UpstreamTls } from "../routing/upstream";

/** Idle upstream connections close after this (ingress-nginx: upstream-keepalive-timeout 60 s). */
const IDLE_MS = 60_000;
/** Idle connections kept per endpoint (ingress-nginx: upstream-keepalive-connections 320). */
const MAX_IDLE = 320;

export class UpstreamPools {
  private readonly agents = new Map<string, Agent>();

  agentFor(endpointKey: string, tls?: UpstreamTls): Agent {
    const key = tls === undefined ? endpointKey : poolKey(endpointKey, tls);
    let agent = this.agents.get(key);
    if (agent === undefined) {
      const options = {
        keepAlive: true,
        maxFreeSockets: MAX_IDLE,
        timeout: IDLE_MS,
        scheduling: "lifo" as const,
      };
      agent =
        tls === undefined ? new Agent(options) : new HttpsAgent({ ...options, ...tls.options });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Drops the pools not in `live` (the pool keys of the table's endpoints). */
  retain(live: ReadonlySet<string>): void {
    for (const [key, agent] of this.agents) {
      if (live.has(key)) continue;
      this.agents.delete(key);
      destroyIdle(agent);
    }
  }

  get size(): number {
    return this.agents.size;
  }

  /** Closes idle connections (shutdown); busy ones end with their request. */
  closeIdle(): void {
    for (const agent of this.agents.values()) destroyIdle(agent);
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function destroyIdle(agent: Agent): void {
  // Node's Agent closes a released socket instead of pooling it once keepAlive is off.
  (agent as Agent & { keepAlive: boolean }).keepAlive = false;
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}
