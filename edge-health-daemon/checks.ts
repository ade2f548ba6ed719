// Check plugins (I/O): each runs against one peer address with its timeout and retries and
// reports pass/fail; score.ts turns the outcomes into "normal".
//   daemon:  GET http://<ip>:<daemon port>/healthz → 200 (the peer daemon is up and answering)
//   kubelet: GET <scheme>://<ip>:<port>/healthz with `Authorization: Bearer <token file>` and/or a
//            client certificate → 200. Any other status fails, as SuperEdge's kubeletauth plugin;
//            401 (credentials refused) and 403 (not authorized) say so in the failure reason, and
//            so does a TLS failure. The kubelet's certificate is verified (chain and IP SAN)
//            against ca-file when set, else not verified: kubeadm's kubelets serve a self-signed
//            certificate of their own unless serverTLSBootstrap is on. The token, CA and client
//            pair are re-read every minute (projected tokens and kubelet client certs rotate).
//            Files that cannot be read at start-up stop the daemon, naming the setting.
//   tcp:     a TCP connection to <ip>:<port> opens.
// Outgoing connections bind this node's own address when known, so that a receiver (and a
// firewall) sees the node's IP as the source.
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { pluginSettingName, type CheckPlugin } from "./settings";
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
      else reject(new Error(statusReason(res.statusCode)));
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

/** Why a kubelet answer is a failure, in words an operator can act on. */
export function statusReason(status: number | undefined): string {
  if (status === 401) {
    return "HTTP 401: the kubelet refused the credentials (token-file or client certificate)";
  }
  if (status === 403) {
    return "HTTP 403: authenticated but not authorized (RBAC get nodes/healthz; nodes/proxy on kubelets before 1.33)";
  }
  return `HTTP ${status ?? "without a status"}`;
}

/** A failed attempt's reason; TLS problems are named as such (code and message). */
export function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|ALTNAME/.test(code)) {
    return `TLS: ${code}: ${error.message}`;
  }
  if (error.name === "TimeoutError" || error.name === "AbortError") return "timed out";
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/** A file the kubelet check reads; a read failure names the plugin setting and the key. */
function readSetting(kind: CheckPlugin["kind"], key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`${pluginSettingName(kind)} ${key}: cannot read ${path} (${code})`, {
      cause: error,
    });
  }
}

const REREAD_MS = 60_000;

/**
 * The kubelet check's credentials: token, CA and client pair, re-read every minute; the HTTPS
 * agent is rebuilt when the TLS files change (a rotated client certificate takes effect).
 */
class KubeletCredentials {
  #token: string | undefined;
  #tls = "";
  #agent: http.Agent;
  #readAt: number;

  constructor(readonly plugin: CheckPlugin) {
    this.#agent = this.#read(true);
    this.#readAt = Date.now();
  }

  #read(startup: boolean): http.Agent {
    const p = this.plugin;
    const read = (key: string, path: string | undefined): Buffer | undefined => {
      if (path === undefined) return undefined;
      if (startup) return readSetting(p.kind, key, path);
      return readFileSync(path);
    };
    this.#token = read("token-file", p.tokenFile)?.toString("utf8").trim();
    const ca = read("ca-file", p.caFile);
    const cert = read("cert-file", p.certFile);
    const key = read("key-file", p.keyFile);
    const tls = [ca, cert, key].map(b => b?.toString("base64") ?? "").join("|");
    if (!startup && tls === this.#tls) return this.#agent;
    this.#tls = tls;
    const options = { keepAlive: true, maxSockets: 1 };
    if (p.scheme === "http") return new http.Agent(options);
    return new https.Agent({ ...options, ca, cert, key, rejectUnauthorized: ca !== undefined });
  }

  /** The agent and headers for a request now; keeps the last good files when a re-read fails. */
  current(now: number): { agent: http.Agent; headers: Record<string, string> } {
    if (now - this.#readAt > REREAD_MS) {
      this.#readAt = now;
      try {
        const agent = this.#read(false);
        if (agent !== this.#agent) this.#agent.destroy();
        this.#agent = agent;
      } catch {
        // A file mid-rotation (or gone): the last good credentials stay; the kubelet says whether
        // they still work.
      }
    }
    const headers: Record<string, string> = {};
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    return { agent: this.#agent, headers };
  }

  close(): void {
    this.#agent.destroy();
  }
}

function attemptFor(
  plugin: CheckPlugin,
  localAddress: () => string | undefined,
  daemonAgent: http.Agent,
  closers: (() => void)[],
): Attempt {
  switch (plugin.kind) {
    case "daemon":
      return (ip, signal) =>
        httpGet({
          url: `http://${ip}:${plugin.port}/healthz`,
          agent: daemonAgent,
          signal,
          localAddress: localAddress(),
        });
    case "kubelet": {
      const credentials = new KubeletCredentials(plugin);
      closers.push(() => credentials.close());
      return (ip, signal) =>
        httpGet({
          url: `${plugin.scheme}://${ip}:${plugin.port}/healthz`,
          ...credentials.current(Date.now()),
          signal,
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
      error = failureReason(e);
    }
  }
  return { kind: plugin.kind, weight: plugin.weight, ok: false, error };
}

/**
 * A prober for the configured plugins. `localAddress` is this node's IP once known. The daemon
 * check may share the keep-alive agent that sends results (transport.ts): same peers, same port,
 * one connection per peer instead of two. Throws, naming the setting, when a file the kubelet check
 * needs cannot be read.
 */
export function makeProber(
  plugins: readonly CheckPlugin[],
  localAddress: () => string | undefined,
  daemonAgent: http.Agent = new http.Agent({ keepAlive: true, maxSockets: 1 }),
): Prober {
  const closers: (() => void)[] = [];
  const attempts = plugins.map(
    p => [p, attemptFor(p, localAddress, daemonAgent, closers)] as const,
  );
  return {
    probe: ip => Promise.all(attempts.map(([plugin, attempt]) => runPlugin(plugin, attempt, ip))),
    close: () => closers.forEach(close => close()),
  };
}
