// A stand-in Kubernetes API for unit tests of code that reaches the cluster through a client it
// does not take as a parameter (Pepr's K8s and kube/kept-alive-api.ts's shared client, which follow
// KUBECONFIG): objects kept in memory, get and list (with an equality or existence labelSelector),
// JSON Patch with `test`, merge patches of the status subresource, create; every request
// recorded; faults injected on cue. Plain HTTP:
// the kubeconfig it writes skips TLS verification. Not a real API server: no watch, no
// admission, no resourceVersion preconditions.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type StandInObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

export interface StandInRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string;
  authorization: string | undefined;
  body: unknown;
}

/** An answer of an extra route (not an API path): status and JSON body. */
export type RouteAnswer = { status: number; body?: unknown };

interface Fault {
  method: string;
  path: RegExp;
  status: number;
  times: number;
}

interface Target {
  /** "/api/v1" or "/apis/<group>/<version>". */
  prefix: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** /api/v1/namespaces/ns/pods/name/status → its parts; undefined for other paths. */
function targetOf(path: string): Target | undefined {
  const parts = path.split("/").filter(Boolean);
  const prefixLength = parts[0] === "api" ? 2 : parts[0] === "apis" ? 3 : 0;
  if (prefixLength === 0 || parts.length <= prefixLength) return undefined;
  const prefix = `/${parts.slice(0, prefixLength).join("/")}`;
  let rest = parts.slice(prefixLength);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  return plural === undefined ? undefined : { prefix, plural, namespace, name, subresource };
}

const keyOf = (prefix: string, plural: string, namespace: string, name: string): string =>
  `${prefix}|${plural}|${namespace}|${name}`;

/**
 * Every answer closes its connection: no client socket (and no timer its HTTP library keeps for
 * it) outlives the request, so none is left over from one test into the next one's mock timers.
 */
const HEADERS = { "content-type": "application/json", connection: "close" };

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, HEADERS).end(
    JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code,
      reason,
      message,
    }),
  );
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, HEADERS).end(JSON.stringify(body));
}

/** Walks a JSON Pointer to the parent container and the last key. */
function pointer(root: unknown, path: string): { parent: unknown; key: string } {
  const tokens = path
    .split("/")
    .slice(1)
    .map(t => t.replace(/~1/g, "/").replace(/~0/g, "~"));
  const key = tokens.pop() ?? "";
  let parent = root;
  for (const token of tokens) parent = (parent as Record<string, unknown> | undefined)?.[token];
  return { parent, key };
}

type PatchOp = { op: string; path: string; value?: unknown };

/** RFC 6902, the ops the code under test sends; false when a `test` fails. */
function applyJsonPatch(object: StandInObject, ops: readonly PatchOp[]): boolean {
  for (const op of ops) {
    const { parent, key } = pointer(object, op.path);
    const container = parent as Record<string, unknown> & unknown[];
    const index = Array.isArray(container) ? Number(key) : undefined;
    if (op.op === "test") {
      const current = index === undefined ? container?.[key] : container[index];
      if (JSON.stringify(current) !== JSON.stringify(op.value)) return false;
    } else if (op.op === "remove") {
      if (index === undefined) delete container[key];
      else container.splice(index, 1);
    } else if (index !== undefined && op.op === "add") {
      container.splice(key === "-" ? container.length : index, 0, op.value);
    } else {
      container[key] = op.value;
    }
  }
  return true;
}

export class KubeStandIn {
  readonly requests: StandInRequest[] = [];
  readonly #objects = new Map<string, StandInObject>();
  readonly #faults: Fault[] = [];
  readonly #routes = new Map<string, (request: StandInRequest) => RouteAnswer>();
  readonly #dir = mkdtempSync(join(tmpdir(), "kube-stand-in-"));
  #version = 1;
  readonly #created: { plural: string; object: StandInObject }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<KubeStandIn> {
    const handlers: ((req: IncomingMessage, res: ServerResponse) => void)[] = [];
    const server = createServer((req, res) => handlers[0]?.(req, res));
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const standIn = new KubeStandIn(server, `http://127.0.0.1:${port}`);
    handlers.push((req, res) => void standIn.handle(req, res));
    return standIn;
  }

  /** A kubeconfig file for this stand-in (a bearer token, TLS verification skipped). */
  kubeconfig(): string {
    const path = join(this.#dir, "kubeconfig");
    writeFileSync(
      path,
      [
        "apiVersion: v1",
        "kind: Config",
        `clusters: [{name: stand-in, cluster: {server: "${this.url}", insecure-skip-tls-verify: true}}]`,
        "users: [{name: tester, user: {token: stand-in-token}}]",
        "contexts: [{name: stand-in, context: {cluster: stand-in, user: tester}}]",
        "current-context: stand-in",
        "",
      ].join("\n"),
    );
    return path;
  }

  /** Stores `object` in the collection at `prefix` ("/api/v1", "/apis/g/v") named `plural`. */
  put(prefix: string, plural: string, object: StandInObject): StandInObject {
    const { namespace = "", name = "" } = object.metadata ?? {};
    const stored = structuredClone(object);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#version) };
    this.#objects.set(keyOf(prefix, plural, namespace, name), stored);
    return structuredClone(stored);
  }

  get(prefix: string, plural: string, namespace: string, name: string): StandInObject | undefined {
    const object = this.#objects.get(keyOf(prefix, plural, namespace, name));
    return object && structuredClone(object);
  }

  /** Every object created (POST) in the collection named `plural` (Events, say), in order. */
  created(plural: string): StandInObject[] {
    return this.#created.filter(c => c.plural === plural).map(c => structuredClone(c.object));
  }

  /** The next `times` requests of `method` whose path matches `path` are answered `status`. */
  fail(method: string, path: RegExp, status: number, times = 1): void {
    this.#faults.push({ method, path, status, times });
  }

  /** Answers `method path` (a path outside the API) with `answer`. */
  route(method: string, path: string, answer: (request: StandInRequest) => RouteAnswer): void {
    this.#routes.set(`${method} ${path}`, answer);
  }

  /** Requests of `method` whose path matches `path`. */
  seen(method: string, path: RegExp): StandInRequest[] {
    return this.requests.filter(r => r.method === method && path.test(r.path));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>(resolve => this.server.close(() => resolve()));
    rmSync(this.#dir, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.url);
    const request: StandInRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      contentType: req.headers["content-type"] ?? "",
      authorization: req.headers.authorization,
      body: text === "" ? undefined : (JSON.parse(text) as unknown),
    };
    this.requests.push(request);
    const fault = this.#faults.find(
      f => f.times > 0 && f.method === request.method && f.path.test(request.path),
    );
    if (fault) {
      fault.times--;
      return status(res, fault.status, "Injected", `injected ${fault.status}`);
    }
    const route = this.#routes.get(`${request.method} ${request.path}`);
    if (route) {
      const answer = route(request);
      return json(res, answer.status, answer.body ?? {});
    }
    const target = targetOf(request.path);
    if (!target) return status(res, 404, "NotFound", `no route ${request.path}`);
    this.#api(request, target, res);
  }

  #api(request: StandInRequest, target: Target, res: ServerResponse): void {
    if (target.name === undefined) {
      if (request.method === "GET") return json(res, 200, this.#list(request, target));
      if (request.method === "POST") return json(res, 201, this.#create(request, target));
      return status(res, 405, "MethodNotAllowed", request.method);
    }
    const { prefix, plural, namespace = "", name } = target;
    const current = this.#objects.get(keyOf(prefix, plural, namespace, name));
    if (!current) return status(res, 404, "NotFound", `${plural} "${name}" not found`);
    if (request.method === "GET") return json(res, 200, current);
    if (request.method !== "PATCH") return status(res, 405, "MethodNotAllowed", request.method);
    const next = this.#patched(current, request, target);
    if (!next) return status(res, 422, "Invalid", "the JSON Patch test operation failed");
    json(res, 200, this.put(prefix, plural, next));
  }

  #create(request: StandInRequest, target: Target): StandInObject {
    const object = request.body as StandInObject;
    const metadata = object.metadata ?? {};
    const name =
      metadata.name ?? `${metadata.generateName ?? "object-"}${this.#created.length + 1}`;
    const created = this.put(target.prefix, target.plural, {
      ...object,
      metadata: { ...metadata, namespace: metadata.namespace ?? target.namespace, name },
    });
    this.#created.push({ plural: target.plural, object: created });
    return created;
  }

  /** The object after the request's patch; undefined when a JSON Patch `test` fails. */
  #patched(
    current: StandInObject,
    request: StandInRequest,
    target: Target,
  ): StandInObject | undefined {
    const next = structuredClone(current);
    if (request.contentType.startsWith("application/json-patch+json")) {
      return applyJsonPatch(next, request.body as PatchOp[]) ? next : undefined;
    }
    const patch = request.body as StandInObject;
    if (target.subresource === "status") next.status = patch.status;
    else Object.assign(next, patch);
    return next;
  }

  #list(request: StandInRequest, target: Target): unknown {
    const selector = request.query.get("labelSelector");
    const wanted = selector ? selector.split(",").map(term => term.split("=")) : [];
    const items = [...this.#objects.entries()]
      .filter(([key]) => key.startsWith(`${target.prefix}|${target.plural}|`))
      .map(([, object]) => object)
      .filter(o => target.namespace === undefined || o.metadata?.namespace === target.namespace)
      // `key=value` asks for that value; a bare `key`, for the label with any value.
      .filter(o =>
        wanted.every(([k, v]) => {
          const value = o.metadata?.labels?.[k ?? ""];
          return v === undefined ? value !== undefined : value === v;
        }),
      );
    return {
      kind: "List",
      apiVersion: "v1",
      metadata: { resourceVersion: String(this.#version) },
      items,
    };
  }
}
