// Calls to the API server on kept-alive connections: the reads admission makes while the API
// server waits on its answer, and the writes the watcher makes for every permission pod (an Event
// when it is injected, the finalizer's release when it is deleted). Pepr's
// fluent client (kubernetes-fluent-client 3.x) reads and parses the kubeconfig and builds a new
// TLS agent for every call, so every call paid a TLS handshake and a CA parse, on both sides:
// most of the 30–90 ms a webhook call added (hack/bench/README.md, admission). Watches, and the
// rarer writes, stay on Pepr's client.
import { KubeConfig } from "@kubernetes/client-node";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  type RequestOptions as HttpsOptions,
} from "node:https";

/** A failed call: `status` as the API server answered (isNotFound etc. read it), message from its Status. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The credentials are applied again this often: a pod's service-account token is rotated. */
const CREDENTIALS_TTL_MS = 60_000;
/** A call the API server does not answer within this is failed (the webhook's own timeout is 10 s). */
const CALL_TIMEOUT_MS = 8_000;

interface Credentials {
  options: HttpsOptions;
  at: number;
}

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
  private credentials: Promise<Credentials> | undefined;

  constructor(private readonly kc: KubeConfig) {
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

  private async call<T>(
    method: "GET" | "POST" | "PATCH",
    path: string,
    body?: { text: string; type: string },
  ): Promise<T> {
    const { options } = await this.currentCredentials();
    const url = new URL(path, this.server);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers =
      body === undefined
        ? options.headers
        : {
            ...options.headers,
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

  /** The kubeconfig's TLS material and Authorization header, applied again once it is old. */
  private currentCredentials(): Promise<Credentials> {
    const now = Date.now();
    const current = this.credentials;
    if (current !== undefined) {
      return current.then(c => (now - c.at < CREDENTIALS_TTL_MS ? c : this.refresh(now)));
    }
    return this.refresh(now);
  }

  private refresh(now: number): Promise<Credentials> {
    const options: Credentials["options"] = { headers: { Accept: "application/json" } };
    this.credentials = this.kc.applyToHTTPSOptions(options).then(() => {
      // applyToHTTPSOptions may hand back its own agent; ours keeps the connections.
      delete (options as { agent?: unknown }).agent;
      return { options, at: now };
    });
    // A failed refresh is tried again on the next call rather than remembered.
    this.credentials.catch(() => (this.credentials = undefined));
    return this.credentials;
  }
}

let shared: { kubeconfig: string | undefined; api: KeptAliveApi } | undefined;

/**
 * The process's client, from the default kubeconfig (KUBECONFIG, ~/.kube/config, in cluster).
 * Pepr's client reads KUBECONFIG on every call; pointed elsewhere (a test's stand-in API server),
 * this one follows too, with a client of its own.
 */
export function keptAliveApi(): KeptAliveApi {
  const kubeconfig = process.env.KUBECONFIG;
  if (shared === undefined || shared.kubeconfig !== kubeconfig) {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    shared = { kubeconfig, api: new KeptAliveApi(kc) };
  }
  return shared.api;
}
