// A small HTTP(S) client for the Kubernetes API that the watch loop can always interrupt: every
// request has a deadline, and a watch stream is dropped when the server stays silent too long.
// client-node's Watch awaits fetch before it returns its AbortController, so a frozen API server
// (stopped process, black-holed network) would hang it forever; this client cannot hang.
import type { KubeConfig } from "@kubernetes/client-node";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { Agent, request as httpsRequest, type RequestOptions } from "node:https";

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

export class ApiClient {
  readonly server: URL;
  readonly #options: RequestOptions;

  private constructor(server: URL, options: RequestOptions) {
    this.server = server;
    this.#options = options;
  }

  static async fromKubeConfig(kc: KubeConfig): Promise<ApiClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    // One keep-alive pool: lists and watches share connections; a watch holds one each.
    options.agent = new Agent({ keepAlive: true, maxSockets: 64 });
    return new ApiClient(new URL(cluster.server), options);
  }

  /** GET `path` as JSON, failing after `timeoutMs`. */
  getJson(path: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = this.#get(path, res => {
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
      signal?.addEventListener("abort", () => req.destroy(new Error(`GET ${path}: aborted`)), {
        once: true,
      });
      req.end();
    });
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
    let abort: () => void = () => {};
    const done = new Promise<void>((resolve, reject) => {
      const req = this.#get(path, res => {
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
    return { done, abort: () => abort() };
  }

  #get(path: string, onResponse: (res: IncomingMessage) => void) {
    const base = this.server;
    const options: RequestOptions = {
      ...this.#options,
      method: "GET",
      hostname: base.hostname,
      port: base.port,
      path: `${base.pathname.replace(/\/$/, "")}${path}`,
      headers: { ...(this.#options.headers ?? {}), accept: "application/json" },
    };
    return base.protocol === "http:"
      ? httpRequest({ ...options, agent: undefined }, onResponse)
      : httpsRequest(options, onResponse);
  }
}

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

function splitLines(res: IncomingMessage, onLine: (line: unknown) => void): void {
  let pending = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    pending += chunk;
    let end = pending.indexOf("\n");
    while (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf("\n");
      if (line.trim() === "") continue;
      try {
        onLine(JSON.parse(line) as unknown);
      } catch (error) {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
        return;
      }
    }
  });
}
