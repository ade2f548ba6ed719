// The kubeconfig's TLS material and Authorization header, as request options. They are applied
// again once a minute: in a pod, the kubelet rewrites the service-account token file before the
// token expires, and a client that read it once at start sends an expired token after an hour.
import { KubeConfig } from "@kubernetes/client-node";
import type { RequestOptions } from "node:https";

/** How long applied credentials are used before the kubeconfig is applied again. */
export const CREDENTIALS_TTL_MS = 60_000;

interface Applied {
  options: RequestOptions;
  at: number;
}

export class KubeCredentials {
  readonly #kc: KubeConfig;
  readonly #now: () => number;
  #applied: Promise<Applied> | undefined;

  constructor(kc: KubeConfig, now: () => number = Date.now) {
    this.#kc = kc;
    this.#now = now;
  }

  /** TLS options and headers (the token) for a request; no agent, the caller keeps its own. */
  async options(): Promise<RequestOptions> {
    const now = this.#now();
    const applied = await (this.#applied ?? this.#apply(now));
    return now - applied.at < CREDENTIALS_TTL_MS
      ? applied.options
      : (await this.#apply(now)).options;
  }

  #apply(now: number): Promise<Applied> {
    const options: RequestOptions = {};
    const applied = this.#kc.applyToHTTPSOptions(options).then(() => {
      // applyToHTTPSOptions may hand back an agent of its own; the caller's keeps the connections.
      delete options.agent;
      return { options, at: now };
    });
    this.#applied = applied;
    // A failed application is tried again on the next request rather than remembered.
    applied.catch(() => {
      if (this.#applied === applied) this.#applied = undefined;
    });
    return applied;
  }
}

/**
 * One `make(kc)` per process, from the default kubeconfig (KUBECONFIG, ~/.kube/config, in
 * cluster), so that its connections are shared. Pepr's client reads KUBECONFIG on every call;
 * pointed elsewhere (a test's stand-in API server), this follows too, with a new one.
 */
export function sharedPerKubeconfig<T>(make: (kc: KubeConfig) => T): () => T {
  let shared: { kubeconfig: string | undefined; value: T } | undefined;
  return () => {
    const kubeconfig = process.env.KUBECONFIG;
    if (shared === undefined || shared.kubeconfig !== kubeconfig) {
      const kc = new KubeConfig();
      kc.loadFromDefault();
      shared = { kubeconfig, value: make(kc) };
    }
    return shared.value;
  };
}
