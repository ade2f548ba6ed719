// One keep-alive pool (an http.Agent) per upstream endpoint, kept across views: a swap that keeps
// an endpoint keeps its warm connections. Endpoints a new view no longer names lose their idle
// connections at once; busy ones finish and then time out of the pool.
import { Agent } from "node:http";

/** Idle upstream connections close after this (ingress-nginx: upstream-keepalive-timeout 60 s). */
const IDLE_MS = 60_000;
/** Idle connections kept per endpoint (ingress-nginx: upstream-keepalive-connections 320). */
const MAX_IDLE = 320;

export class UpstreamPools {
  private readonly agents = new Map<string, Agent>();

  agentFor(key: string): Agent {
    let agent = this.agents.get(key);
    if (agent === undefined) {
      agent = new Agent({
        keepAlive: true,
        maxFreeSockets: MAX_IDLE,
        timeout: IDLE_MS,
        scheduling: "lifo",
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Drops the pools of endpoints not in `live` (the keys of the table's endpoints). */
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
