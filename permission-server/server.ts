// Assembles the permission server: Kubernetes clients, the pod cache, the catalog of groups and
// providers, the breaker store, the grant ledger, the grant service, the HTTP API; a sweep removes
// breaker entries of pods that are gone and revokes what the ledger still holds for them. `startServer` is what main.ts, the tests and the local stack run.
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { once } from "node:events";
import { PERMISSION_MANAGED_LABEL } from "../core/names";
import { TokenReviewer } from "./http/auth";
import { BreakerStore } from "../kube/breaker-store";
import { KubeCatalog, type ProviderBuilder } from "./providers/catalog";
import { realClock, type Clock } from "./grants/job";
import { GrantService } from "./grants/service";
import { GrantLedger } from "./grants/ledger";
import { createApp } from "./http/routes";
import { isNotFound } from "../kube/api-errors";
import { makeKube, type Kube } from "./kube";
import { errorText, type Logger } from "../kube/log";
import { Metrics } from "./metrics";
import { serveMetrics } from "../kube/metrics-server";
import { PodCache } from "./pods/cache";
import { Revoker } from "./grants/revoker";
import type { Settings } from "./settings";
import { readTlsPair, reloadTlsOnChange } from "./http/tls";

export interface ServerOptions {
  log: Logger;
  /** Builds a provider client and its limiter (providers/registry.ts by default). */
  build: ProviderBuilder;
  clock?: Clock;
  random?: () => number;
  kube?: Kube;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** http://HOST:PORT/metrics when BULWARK_PERMISSION_METRICS_PORT is set. */
  readonly metricsUrl?: string;
  readonly metrics: Metrics;
  readonly grants: GrantService;
  stop(): Promise<void>;
}

/** HTTPS when a certificate is configured (reloaded when its files change), else plain HTTP. */
function serve(
  app: ReturnType<typeof createApp>,
  settings: Settings,
  log: Logger,
): { server: Server; stopReload: () => void } {
  if (!settings.tls) return { server: createHttpServer(app), stopReload: () => {} };
  const pair = readTlsPair(settings.tls);
  const server = createHttpsServer({ cert: pair.cert, key: pair.key }, app);
  const stopReload = reloadTlsOnChange(server, settings.tls, {
    intervalMs: settings.tls.reloadIntervalMs,
    current: pair,
    log,
  });
  return { server, stopReload };
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** The plain-HTTP /metrics listener; a port it cannot take stops the start, as the API's does. */
async function listenMetrics(
  metrics: Metrics,
  settings: Settings,
  log: Logger,
): Promise<{ server: Server; url: string } | undefined> {
  if (settings.metricsPort === undefined) return undefined;
  const server = serveMetrics(metrics.registry, settings.metricsPort, settings.host, log);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${displayHost(settings.host)}:${port}/metrics` };
}

/** Where a client on this machine reaches a listener bound to `host`. */
const displayHost = (host: string) => (host === "0.0.0.0" ? "127.0.0.1" : host);

export async function startServer(
  settings: Settings,
  options: ServerOptions,
): Promise<RunningServer> {
  const { log } = options;
  const kube = options.kube ?? makeKube(settings.kubeconfigPath);
  const metrics = new Metrics();
  const pods = new PodCache(kube, log);
  await pods.start();
  const catalog = new KubeCatalog(kube, {
    build: options.build,
    breaker: settings.providerBreaker,
    share: 1 / settings.replicas,
  });
  const store = new BreakerStore(kube.core, settings.namespace, settings.breakerConfigMap);
  const ledger = new GrantLedger(kube.custom, settings.namespace);
  const revoker = new Revoker({ catalog, ledger, log, metrics });
  const grants = new GrantService({
    kube,
    settings,
    catalog,
    store,
    ledger,
    pods,
    revoker,
    log,
    metrics,
    clock: options.clock ?? realClock,
    random: options.random ?? Math.random,
  });
  const app = createApp({
    kube,
    reviewer: new TokenReviewer(kube),
    audience: settings.audience,
    replica: settings.replica,
    longPollMaxMs: settings.longPollMaxMs,
    grants,
    revoker,
    ledger,
    store,
    pods,
    metrics,
    log,
  });
  const { server, stopReload } = serve(app, settings, log);
  // Long-polls hold requests for up to BULWARK_LONG_POLL_MAX; keep sockets longer than that.
  server.keepAliveTimeout = settings.longPollMaxMs + 5000;
  server.requestTimeout = 0;
  const port = await listen(server, settings.port, settings.host);
  const url = `${settings.tls ? "https" : "http"}://${displayHost(settings.host)}:${port}`;
  const plainMetrics = await listenMetrics(metrics, settings, log);

  const prune = setInterval(() => {
    void pruneBreakers(kube, store, log);
    void revokeOrphans({ kube, ledger, revoker, log });
  }, settings.pruneIntervalMs);
  prune.unref();
  const gauges = setInterval(() => {
    for (const [name, breaker] of catalog.breakers()) {
      metrics.providerBreakerOpen.set({ provider: name }, breaker.state === "closed" ? 0 : 1);
    }
  }, 1000);
  gauges.unref();
  log.info("permission server listening", {
    url,
    metrics: plainMetrics?.url,
    replica: settings.replica,
  });

  return {
    url,
    port,
    ...(plainMetrics ? { metricsUrl: plainMetrics.url } : {}),
    metrics,
    grants,
    stop: async () => {
      clearInterval(prune);
      clearInterval(gauges);
      stopReload();
      plainMetrics?.server.close();
      await new Promise<void>(resolve => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await grants.stop();
      await pods.stop();
      await catalog.close();
      log.info("permission server stopped", { replica: settings.replica });
    },
  };
}

/** Removes breaker entries of pods that no longer exist (a fresh list, never the cache). */
export async function pruneBreakers(kube: Kube, store: BreakerStore, log: Logger): Promise<void> {
  try {
    const listedAt = new Date();
    const pods = await kube.core.listPodForAllNamespaces({
      labelSelector: `${PERMISSION_MANAGED_LABEL}=true`,
    });
    const live = new Set(pods.items.map(p => p.metadata?.uid ?? ""));
    const removed = await store.prune(live, listedAt);
    if (removed.length > 0) log.info("pruned breaker entries of pods that are gone", { removed });
  } catch (error) {
    log.warn("breaker prune failed; the next sweep retries", { err: errorText(error) });
  }
}

/**
 * Revokes what the ledger holds for pods that no longer exist: a finalizer removed by force (the
 * revocation deadline, `bulwark uninstall`, a person) leaves no grant behind. Each candidate is
 * read fresh by name, so a pod created after the list is never taken for gone.
 */
export async function revokeOrphans(deps: {
  kube: Kube;
  ledger: GrantLedger;
  revoker: Revoker;
  log: Logger;
}): Promise<void> {
  const { kube, ledger, revoker, log } = deps;
  try {
    for (const { spec } of await ledger.list()) {
      const { namespace, name, uid } = spec.pod;
      const pod = await kube.core.readNamespacedPod({ namespace, name }).catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      if (pod?.metadata?.uid === uid) continue;
      log.info("revoking the grants of a pod that is gone", { ns: namespace, name, uid });
      await revoker.revoke({ namespace, pod: name, uid });
    }
  } catch (error) {
    log.warn("orphan grant sweep failed; the next sweep retries", { err: errorText(error) });
  }
}
