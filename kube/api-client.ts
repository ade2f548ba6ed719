// A small HTTP(S) client for the Kubernetes API that a list-watch loop can always interrupt:
// every request has a deadline, and a watch stream is dropped when the server stays silent too
// long. client-node's Watch awaits fetch before it returns its AbortController, so a frozen API
// server (stopped process, black-holed network) would hang it forever; this client cannot hang.
import type { KubeConfig } from "@kubernetes/client-node";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { Agent, request as httpsRequest, type RequestOptions } from "node:https";
import { KubeCredentials, sharedPerKubeconfig } from "./credentials";

export class ApiError extends Error {
  readonly statusCode: number;
  readonly reason: string | undefined;
  constructor(statusCode: number, message: string, reason?: string) {
    super(message);
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

export interface WatchStream {
  /** Settles when the stream ends: resolves on a clean close, rejects on an error or silence. */
  done: Promise<void>;
  abort(): void;
}

/** What a list-watch loop needs of the API server: kube/reflector.ts runs on it. */
export interface ListWatchClient {
  getJson(path: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown>;
  stream(
    path: string,
    onLine: (line: unknown) => void,
    timing: { connectMs: number; idleMs: number; onOpen?: () => void },
  ): WatchStream;
}

export class ApiClient implements ListWatchClient {
  readonly server: URL;
  readonly #credentials: KubeCredentials;
  // One keep-alive pool: lists and watches share connections; a watch holds one each.
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    this.server = new URL(cluster.server);
    this.#credentials = new KubeCredentials(kc);
  }

  /** GET `path` as JSON, failing after `timeoutMs`. */
  async getJson(path: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const options = await this.#credentials.options();
    if (signal?.aborted) throw new Error(`GET ${path}: aborted`);
    let onAbort = (): void => {};
    const answer = new Promise((resolve, reject) => {
      const req = this.#get(options, path, res => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status === 200) return settle(() => JSON.parse(body) as unknown, resolve, reject);
          reject(statusError(status, body));
        });
      });
      const timer = setTimeout(
        () => req.destroy(new Error(`GET ${path}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on("error", error => {
        clearTimeout(timer);
        reject(error);
      });
      onAbort = () => req.destroy(new Error(`GET ${path}: aborted`));
      signal?.addEventListener("abort", onAbort, { once: true });
      req.end();
    });
    // The listener's closure holds the request and, through it, the answer: a signal that
    // outlives its requests (a reflector's, for its life) must not keep every list it made.
    return answer.finally(() => signal?.removeEventListener("abort", onAbort));
  }

  /**
   * GET `path` as a stream of JSON lines (a watch). `onLine` gets each parsed line. The stream
   * fails when no byte arrives for `idleMs` or the headers take longer than `connectMs`.
   */
  stream(
    path: string,
    onLine: (line: unknown) => void,
    timing: { connectMs: number; idleMs: number; onOpen?: () => void },
  ): WatchStream {
    let aborted = false;
    let abort: () => void = () => void (aborted = true);
    const open = (options: RequestOptions): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        // Aborted while the credentials were read: never sent.
        if (aborted) return resolve();
        const req = this.#get(options, path, res => {
          const status = res.statusCode ?? 0;
          if (status !== 200) return readError(res, status, reject);
          req.setTimeout(timing.idleMs, () =>
            req.destroy(new Error(`watch ${path}: silent for ${timing.idleMs} ms`)),
          );
          clearTimeout(connectTimer);
          timing.onOpen?.();
          splitLines(res, onLine);
          res.on("end", resolve);
          res.on("error", reject);
          res.on("aborted", () => reject(new Error(`watch ${path}: aborted by the server`)));
        });
        const connectTimer = setTimeout(
          () => req.destroy(new Error(`watch ${path}: no answer in ${timing.connectMs} ms`)),
          timing.connectMs,
        );
        req.on("error", error => {
          clearTimeout(connectTimer);
          reject(error);
        });
        req.on("close", () => {
          clearTimeout(connectTimer);
          resolve();
        });
        abort = () => req.destroy();
        req.end();
      });
    const done = this.#credentials.options().then(open);
    return { done, abort: () => abort() };
  }

  #get(credentials: RequestOptions, path: string, onResponse: (res: IncomingMessage) => void) {
    const base = this.server;
    const options: RequestOptions = {
      ...credentials,
      method: "GET",
      hostname: base.hostname,
      port: base.port,
      path: `${base.pathname.replace(/\/$/, "")}${path}`,
      headers: { ...(credentials.headers ?? {}), accept: "application/json" },
    };
    return base.protocol === "http:"
      ? httpRequest(options, onResponse)
      : httpsRequest({ ...options, agent: this.#agent }, onResponse);
  }
}

/** The process's list-watch client: its watches share one connection pool. */
export const defaultApiClient = sharedPerKubeconfig(kc => new ApiClient(kc));

function settle<T>(parse: () => T, resolve: (v: T) => void, reject: (e: unknown) => void): void {
  try {
    resolve(parse());
  } catch (error) {
    reject(error);
  }
}

function statusError(status: number, body: string): ApiError {
  try {
    const parsed = JSON.parse(body) as { message?: string; reason?: string };
    return new ApiError(status, parsed.message ?? `HTTP ${status}`, parsed.reason);
  } catch {
    return new ApiError(status, `HTTP ${status}: ${body.slice(0, 200)}`);
  }
}

function readError(res: IncomingMessage, status: number, reject: (e: unknown) => void): void {
  let body = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => (body += chunk));
  res.on("end", () => reject(statusError(status, body)));
  res.on("error", reject);
}

/**
 * A watch's JSON lines, from its chunks as they arrive. Each chunk is scanned once, and a line
 * split over many chunks is joined once, when its end arrives: an event of n bytes costs O(n),
 * not a rescan of everything pending on every chunk (a large object arrives in 16 KiB TLS
 * records). Blank lines are skipped. Throws what JSON.parse or `onLine` throws.
 */
export function jsonLines(onLine: (line: unknown) => void): (chunk: string) => void {
  let pending = "";
  return chunk => {
    let start = 0;
    for (let end = chunk.indexOf("\n"); end >= 0; end = chunk.indexOf("\n", start)) {
      const line = pending + chunk.slice(start, end);
      pending = "";
      start = end + 1;
      if (line.trim() !== "") onLine(JSON.parse(line) as unknown);
    }
    pending += chunk.slice(start);
  };
}

function splitLines(res: IncomingMessage, onLine: (line: unknown) => void): void {
  const push = jsonLines(onLine);
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    try {
      push(chunk);
    } catch (error) {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
