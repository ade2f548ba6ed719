// Check plugins (I/O): each runs against one peer address with its timeout and retries and
// reports pass/fail; score.ts turns the outcomes into "normal".
//   daemon:  GET http://<ip>:<daemon port>/healthz → 200 (the peer daemon is up and answering)
//   kubelet: GET <scheme>://<ip>:<port>/healthz with `Authorization: Bearer <token file>` → 200.
//            Any other status (401/403 included) fails, as SuperEdge's kubeletauth plugin. TLS is
//            verified against ca-file when set, else not verified (the kubelet's serving cert is
//            usually self-signed); the token is re-read every minute (projected tokens rotate).
//   tcp:     a TCP connection to <ip>:<port> opens.
// Outgoing connections bind this node's own address when known, so that a receiver (and a
// firewall) sees the node's IP as the source.
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { CheckPlugin } from "./settings";
import type { CheckOutcome } from "./score";

export interface Prober {
  /** Runs every plugin against `ip`. */
  probe(ip: string): Promise<CheckOutcome[]>;
  close(): void;
}

type Attempt = (ip: string, signal: AbortSignal) => Promise<void>;

function httpGet(options: {
  url: string;
  agent: http.Agent;
  signal: AbortSignal;
  headers?: Record<string, string>;
  localAddress?: string;
}): Promise<void> {
  const { url, agent, signal, headers, localAddress } = options;
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { agent, signal, headers, localAddress }, res => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`HTTP ${res.statusCode}`));
    });
    req.on("error", reject);
  });
}

function tcpDial(options: {
  ip: string;
  port: number;
  signal: AbortSignal;
  localAddress?: string;
}): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: options.ip,
      port: options.port,
      localAddress: options.localAddress,
    });
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    options.signal.addEventListener("abort", () => fail(new Error("timed out")), { once: true });
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.end();
      resolve();
    });
  });
}

class TokenReader {
  #token = "";
  #readAt = 0;
  constructor(readonly file: string) {}
  get(now: number): string {
    if (now - this.#readAt > 60_000) {
      this.#token = readFileSync(this.file, "utf8").trim();
      this.#readAt = now;
    }
    return this.#token;
  }
}

function attemptFor(
  plugin: CheckPlugin,
  localAddress: () => string | undefined,
  daemonAgent: http.Agent,
): Attempt {
  const agentOptions = { keepAlive: true, maxSockets: 1 };
  switch (plugin.kind) {
    case "daemon": {
      const agent = daemonAgent;
      return (ip, signal) =>
        httpGet({
          url: `http://${ip}:${plugin.port}/healthz`,
          agent,
          signal,
          localAddress: localAddress(),
        });
    }
    case "kubelet": {
      const ca = plugin.caFile ? readFileSync(plugin.caFile) : undefined;
      const agent =
        plugin.scheme === "https"
          ? new https.Agent({ ...agentOptions, ca, rejectUnauthorized: ca !== undefined })
          : new http.Agent(agentOptions);
      const token = new TokenReader(plugin.tokenFile);
      return (ip, signal) =>
        httpGet({
          url: `${plugin.scheme}://${ip}:${plugin.port}/healthz`,
          agent,
          signal,
          headers: { authorization: `Bearer ${token.get(Date.now())}` },
          localAddress: localAddress(),
        });
    }
    case "tcp":
      return (ip, signal) =>
        tcpDial({ ip, port: plugin.port, signal, localAddress: localAddress() });
  }
}

async function runPlugin(plugin: CheckPlugin, attempt: Attempt, ip: string): Promise<CheckOutcome> {
  let error = "";
  for (let i = 0; i <= plugin.retries; i++) {
    try {
      await attempt(ip, AbortSignal.timeout(plugin.timeoutMs));
      return { kind: plugin.kind, weight: plugin.weight, ok: true };
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
  }
  return { kind: plugin.kind, weight: plugin.weight, ok: false, error };
}

/**
 * A prober for the configured plugins. `localAddress` is this node's IP once known. The daemon
 * check may share the keep-alive agent that sends results (transport.ts): same peers, same port,
 * one connection per peer instead of two.
 */
export function makeProber(
  plugins: readonly CheckPlugin[],
  localAddress: () => string | undefined,
  daemonAgent: http.Agent = new http.Agent({ keepAlive: true, maxSockets: 1 }),
): Prober {
  const attempts = plugins.map(p => [p, attemptFor(p, localAddress, daemonAgent)] as const);
  return {
    probe: ip => Promise.all(attempts.map(([plugin, attempt]) => runPlugin(plugin, attempt, ip))),
    close: () => {},
  };
}
