// Every call the module makes to the API server that is not a watch, on kept-alive connections:
// admission's reads while the API server waits on its answer, the watcher's writes for every
// permission pod (an Event when it is injected, the finalizer's release), status patches, and the
// periodic lists of resyncs. Pepr's fluent client (kubernetes-fluent-client 3.x) reads and parses
// the kubeconfig and builds a new TLS agent for every call, so every call paid a TLS handshake
// and a CA parse, on both sides: most of the 30–90 ms a webhook call added (hack/bench/README.md,
// admission). Paths come from resourcePath (api-paths.ts).
import type { KubeConfig } from "@kubernetes/client-node";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { KubeCredentials, sharedPerKubeconfig } from "./credentials";

/** A failed call: `status` as the API server answered (isNotFound etc. read it), message from its Status. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Objects per page of a list (client-go's pager uses 500 as well). */
const LIST_PAGE = 500;

interface ListPage<T> {
  items?: T[];
  metadata?: { continue?: string };
}

/** A call the API server does not answer within this is failed (the webhook's own timeout is 10 s). */
const CALL_TIMEOUT_MS = 8_000;

function statusMessage(text: string, status: number): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message;
  } catch {
    // not a Status: fall through
  }
  return `HTTP ${status}`;
}

export class KeptAliveApi {
  private readonly server: URL;
  private readonly agent: HttpAgent;
  private readonly credentials: KubeCredentials;

  constructor(kc: KubeConfig) {
    this.credentials = new KubeCredentials(kc);
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error("the kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
    const https = this.server.protocol === "https:";
    // One agent for the process: its sockets (and their TLS sessions) outlive each call.
    const options = {
      keepAlive: true,
      maxSockets: 16,
      maxFreeSockets: 4,
      scheduling: "lifo" as const,
    };
    this.agent = https ? new HttpsAgent(options) : new HttpAgent(options);
  }

  /** The object at `path` (`/api/v1/namespaces/x/secrets/y`); ApiCallError when the answer is not 200. */
  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  /** The object at `path`, or undefined when the API server answers 404 (it does not exist). */
  async getIfExists<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (error) {
      if (error instanceof ApiCallError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * Every object of the collection at `path` (with `query`: selectors), read in pages of
   * LIST_PAGE so that no single answer holds a large cluster's whole list and each page has its
   * own deadline. Only the first page is a fresh read; the rest continue at its resourceVersion.
   * A continue token that expired meanwhile (410: etcd compacted past it) is answered as
   * client-go's pager does: one full list, unpaged.
   */
  async list<T>(path: string, query: Record<string, string> = {}): Promise<T[]> {
    const items: T[] = [];
    let next: string | undefined;
    do {
      const page = await this.listPage<T>(path, query, next);
      if (page === "expired") {
        const whole = await this.get<ListPage<T>>(`${path}?${new URLSearchParams(query)}`);
        return whole.items ?? [];
      }
      for (const item of page.items ?? []) items.push(item);
      next = page.metadata?.continue || undefined;
    } while (next);
    return items;
  }

  /** One page of a list; "expired" when its continue token is no longer served (410). */
  private async listPage<T>(
    path: string,
    query: Record<string, string>,
    next: string | undefined,
  ): Promise<ListPage<T> | "expired"> {
    const params = new URLSearchParams({ ...query, limit: String(LIST_PAGE) });
    if (next) params.set("continue", next);
    try {
      return await this.get<ListPage<T>>(`${path}?${params}`);
    } catch (error) {
      if (next !== undefined && error instanceof ApiCallError && error.status === 410)
        return "expired";
      throw error;
    }
  }

  /** Creates `body` at `path` (`/api/v1/namespaces/x/events`); the stored object, as the API server answers. */
  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, { text: JSON.stringify(body), type: "application/json" });
  }

  /** Applies a JSON Patch (RFC 6902) to the object at `path`; the object as patched. */
  jsonPatch<T>(path: string, operations: readonly object[]): Promise<T> {
    return this.call<T>("PATCH", path, {
      text: JSON.stringify(operations),
      type: "application/json-patch+json",
    });
  }

  /** Applies a JSON merge patch (RFC 7386) to the object at `path` (`…/status` for its status). */
  mergePatch<T>(path: string, patch: object): Promise<T> {
    return this.call<T>("PATCH", path, {
      text: JSON.stringify(patch),
      type: "application/merge-patch+json",
    });
  }

  private async call<T>(
    method: "GET" | "POST" | "PATCH",
    path: string,
    body?: { text: string; type: string },
  ): Promise<T> {
    const options = await this.credentials.options();
    const url = new URL(path, this.server);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers =
      body === undefined
        ? { ...options.headers, Accept: "application/json" }
        : {
            ...options.headers,
            Accept: "application/json",
            "Content-Type": body.type,
            "Content-Length": Buffer.byteLength(body.text),
          };
    return new Promise<T>((resolve, reject) => {
      const req = send(
        url,
        { ...options, headers, method, agent: this.agent, timeout: CALL_TIMEOUT_MS },
        res => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = res.statusCode ?? 0;
            if (status === 200 || status === 201) resolve(JSON.parse(text) as T);
            else
              reject(
                new ApiCallError(
                  status,
                  `${method} ${url.pathname}: ${statusMessage(text, status)}`,
                ),
              );
          });
        },
      );
      req.on("timeout", () =>
        req.destroy(new Error(`${method} ${url.pathname}: no answer in ${CALL_TIMEOUT_MS} ms`)),
      );
      req.on("error", reject);
      req.end(body?.text);
    });
  }
}

/** The process's client for calls: one connection pool (see sharedPerKubeconfig). */
export const keptAliveApi = sharedPerKubeconfig(kc => new KeptAliveApi(kc));
