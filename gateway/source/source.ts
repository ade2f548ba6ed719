// Everything the gateway reads from the API server: a reflector per kind and namespace feeding
// one ObjectCache, plus a light probe that says whether the API server answers right now (a
// watch can sit idle for a minute without proving anything).
import type { ApiClient } from "../../kube/api-client";
import { ObjectCache, type Change, type ResourceKind } from "./cache";
import { Reflector, type ReflectorOptions, type ReflectorStatus } from "../../kube/reflector";
import { checksumKeysTarget, watchTargets } from "./resources";

/**
 * Where each kind is read. `ingressStorage`, when set, is a separate API server that holds only
 * the ingress data (Ingresses, TLS Secrets, IngressClasses, checksum objects), as Tengine-Ingress's
 * ingress storage cluster does; Services and EndpointSlices always come from the workload cluster.
 */
export interface SourceClients {
  workload: ApiClient;
  ingressStorage?: ApiClient;
}

const WORKLOAD_KINDS: ReadonlySet<ResourceKind> = new Set(["endpointSlice", "service"]);

export interface SourceOptions {
  /** Namespaces of Ingresses, Secrets and EndpointSlices; empty means all. */
  namespaces: readonly string[];
  /** Namespaces of the checksum objects; empty means all. */
  checksumNamespaces: readonly string[];
  /** The ConfigMap of trusted signing keys, when the kind checksumKeys is watched. */
  checksumKeys?: { namespace: string; name: string };
  /** The kinds to watch (checksum kinds only when their feature is on). */
  kinds: readonly ResourceKind[];
  probeIntervalMs: number;
  reflector: Partial<ReflectorOptions>;
  /** Called after every complete list of a kind (also an empty one, which changes nothing). */
  onListed?: (kind: ResourceKind) => void;
}

export interface ApiServerStatus {
  /** The last probe got an answer. */
  reachable: boolean;
  lastContactAt?: string;
  lastError?: string;
  /** Since when the API server has not answered; undefined while it answers. */
  unreachableSince?: string;
  resources: ReflectorStatus[];
}

const PROBE_TIMEOUT_MS = 3000;

export class Source {
  readonly cache: ObjectCache;
  readonly #clients: SourceClients;
  readonly #options: SourceOptions;
  readonly #reflectors: { kind: ResourceKind; reflector: Reflector }[];
  #probe: NodeJS.Timeout | undefined;
  #api: Omit<ApiServerStatus, "resources"> = { reachable: false };

  constructor(
    clients: SourceClients | ApiClient,
    options: SourceOptions,
    onChange: (change: Change) => void,
  ) {
    this.#clients = "workload" in clients ? clients : { workload: clients };
    this.#options = options;
    this.cache = new ObjectCache(onChange);
    this.#reflectors = options.kinds.flatMap(kind => {
      const checksum = kind === "ingressChecksum" || kind === "secretChecksum";
      const namespaces = checksum ? options.checksumNamespaces : options.namespaces;
      const targets =
        kind === "checksumKeys" && options.checksumKeys
          ? [checksumKeysTarget(options.checksumKeys)]
          : watchTargets(kind, namespaces);
      return targets.map(target => {
        const sink = this.cache.sink(kind, target.namespace, () => options.onListed?.(kind));
        const client = this.#clientOf(kind);
        return { kind, reflector: new Reflector(client, target.spec, sink, options.reflector) };
      });
    });
  }

  #clientOf(kind: ResourceKind): ApiClient {
    const storage = this.#clients.ingressStorage;
    return storage === undefined || WORKLOAD_KINDS.has(kind) ? this.#clients.workload : storage;
  }

  start(): void {
    for (const { reflector } of this.#reflectors) reflector.start();
    void this.#probeOnce();
    this.#probe = setInterval(() => void this.#probeOnce(), this.#options.probeIntervalMs);
    this.#probe.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#probe);
    await Promise.all(this.#reflectors.map(r => r.reflector.stop()));
  }

  /** Whether every watched kind has been listed completely at least once. */
  synced(): boolean {
    return this.#reflectors.every(r => r.reflector.status().synced);
  }

  /** Whether every reflector of `kind` has listed at least once (true for an unwatched kind). */
  kindSynced(kind: ResourceKind): boolean {
    return this.#reflectors.filter(r => r.kind === kind).every(r => r.reflector.status().synced);
  }

  status(): ApiServerStatus {
    return { ...this.#api, resources: this.#reflectors.map(r => r.reflector.status()) };
  }

  /** Both API servers must answer: the workload one and, when set, the ingress storage. */
  async #probeOnce(): Promise<void> {
    const now = new Date().toISOString();
    const { workload, ingressStorage } = this.#clients;
    try {
      await workload.getJson("/version", PROBE_TIMEOUT_MS);
      await ingressStorage?.getJson("/version", PROBE_TIMEOUT_MS).catch((error: unknown) => {
        throw new Error(
          `ingress storage: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      this.#api = { reachable: true, lastContactAt: now };
    } catch (error) {
      this.#api = {
        reachable: false,
        lastContactAt: this.#api.lastContactAt,
        lastError: error instanceof Error ? error.message : String(error),
        unreachableSince: this.#api.unreachableSince ?? now,
      };
    }
  }
}
