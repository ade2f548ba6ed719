// bulwark-edge-health: the edge-health daemon (DaemonSet on edge nodes). See README.md.
//   main(argv) → 0 after a graceful stop on SIGTERM/SIGINT, 2 on a bad setting, 1 on a failure.
import { Agent, type Server } from "node:http";
import { version } from "../package.json";
import { DEFAULT_VOTE_RULES } from "../core/edge";
import { makeProber } from "./checks";
import { EdgeDaemon, type DaemonOptions } from "./daemon";
import { KubeSource } from "./kube";
import { createLogger, type Logger } from "../kube/log";
import { serveMetrics } from "../kube/metrics-server";
import { EdgeMetrics } from "./metrics";
import { closeServer, listen, makeApp } from "./server";
import { NAME, helpText, parseSettings, type Settings } from "./settings";
import { makeSender } from "./transport";
import { runWorkload, untilStopSignal, workloadKubeConfig } from "../kube/workload-process";

/** The engine's options from the settings: every setting the engine reads comes from here. */
export function daemonOptions(settings: Settings, keys: readonly Buffer[]): DaemonOptions {
  return {
    self: settings.nodeName,
    keys,
    hmacOverlapMs: settings.hmacOverlapMs,
    maxClockSkewMs: settings.maxClockSkewMs,
    checkPeriodMs: settings.checkPeriodMs,
    scoreLine: settings.scoreLine,
    voteTimeoutMs: settings.voteTimeoutMs,
    messageMaxAgeMs: settings.messageMaxAgeMs,
    maxProbePeers: settings.maxProbePeers,
    writerFallbackPeriods: settings.writerFallbackPeriods,
    voteTermPeriods: settings.voteTermPeriods,
    verifySource: settings.verifySource,
  };
}

/**
 * Why the vote term may be too long for admission, which reads a longer term as stale (so no vote
 * would protect anything). Its limit is the Pepr module's setting, which this daemon cannot read:
 * the default is checked, and a warning names the setting.
 */
export function voteTermWarning(settings: Settings): Record<string, unknown> | undefined {
  const voteTermMs = settings.voteTermPeriods * settings.checkPeriodMs;
  if (voteTermMs <= DEFAULT_VOTE_RULES.maxTermMs) return undefined;
  return {
    voteTermMs,
    defaultMaxTermMs: DEFAULT_VOTE_RULES.maxTermMs,
    setting: "BULWARK_EDGE_MAX_VOTE_TERM_SECONDS of the Pepr module must be at least the term",
  };
}

/** What the start-up line says about each check, so an unverified kubelet TLS is visible. */
export function describeChecks(settings: Settings): Record<string, unknown>[] {
  return settings.checks.map(c => ({
    kind: c.kind,
    weight: c.weight,
    port: c.port,
    timeoutMs: c.timeoutMs,
    retries: c.retries,
    ...(c.kind === "kubelet"
      ? {
          scheme: c.scheme,
          tls: c.scheme === "http" ? "none" : c.caFile ? "verified" : "not verified (no ca-file)",
          bearerToken: c.tokenFile !== undefined,
          clientCertificate: c.certFile !== undefined,
        }
      : {}),
  }));
}

/** The metrics, served on --metrics-port when it is set; without it they are still kept. */
function startMetrics(settings: Settings, log: Logger): EdgeMetrics {
  const metrics = new EdgeMetrics();
  if (settings.metricsPort !== undefined) {
    serveMetrics(metrics.registry, settings.metricsPort, settings.listenAddress, log);
  }
  return metrics;
}

async function run(settings: Settings): Promise<number> {
  const log = createLogger("bulwark-edge-health", settings.logLevel, { self: settings.nodeName });
  const kube = new KubeSource(workloadKubeConfig(settings.kubeconfig), settings, log);
  const selfIp = (): string | undefined => kube.selfIp();
  // One keep-alive connection per peer, shared by the daemon check and the result PUTs. Files the
  // kubelet check needs are read here, before any network: a bad path stops the daemon, naming it.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const prober = makeProber(settings.checks, selfIp, agent);
  const keys = await kube.hmacKeys(settings);
  await kube.start();
  const sender = makeSender({
    agent,
    port: settings.port,
    timeoutMs: Math.min(settings.checkPeriodMs, 2000),
    localAddress: selfIp,
  });
  const metrics = startMetrics(settings, log);
  const daemon = new EdgeDaemon(
    daemonOptions(settings, keys),
    {
      now: Date.now,
      members: () => kube.members(),
      onRecord: name => kube.onRecord(name),
      write: (name, value, term) => kube.write(name, value, term),
      probe: ip => prober.probe(ip),
      send: (to, message) => sender.send(to, message),
      log,
    },
    metrics,
  );
  const server: Server = await listen(makeApp(daemon), settings.listenAddress, settings.port);
  log.info("started", {
    listen: `${settings.listenAddress}:${settings.port}`,
    checkPeriodMs: settings.checkPeriodMs,
    voteTimeoutMs: settings.voteTimeoutMs,
    voteTermMs: settings.voteTermPeriods * settings.checkPeriodMs,
    metrics:
      settings.metricsPort === undefined
        ? "off"
        : `${settings.listenAddress}:${settings.metricsPort}/metrics`,
    checks: describeChecks(settings),
  });
  const longTerm = voteTermWarning(settings);
  if (longTerm) log.warn("the vote term is longer than admission accepts by default", longTerm);
  const round = (): void =>
    void daemon.checkRound().catch(error => log.warn("round failed", { error: String(error) }));
  round();
  const timer = setInterval(round, settings.checkPeriodMs);
  // The keys are re-read every --hmac-reload: a rotated Secret (or mounted file) takes effect.
  const rekey = setInterval(() => {
    kube.hmacKeys(settings).then(
      k => daemon.setKeys(k),
      error =>
        log.warn("HMAC key re-read failed; keeping the current keys", { error: String(error) }),
    );
  }, settings.hmacReloadMs);
  const signal = await untilStopSignal();
  log.info("stopping", { signal });
  clearInterval(timer);
  clearInterval(rekey);
  daemon.stop();
  await closeServer(server);
  sender.close();
  prober.close();
  await kube.stop();
  log.close();
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseSettings(argv, process.env);
  if (parsed.kind === "help") {
    process.stdout.write(helpText(version));
    return 0;
  }
  if (parsed.kind === "version") {
    process.stdout.write(`${NAME} ${version}\n`);
    return 0;
  }
  if (parsed.kind === "error") {
    process.stderr.write(`${NAME}: ${parsed.message}\n`);
    return 2;
  }
  try {
    return await run(parsed.settings);
  } catch (error) {
    process.stderr.write(`${NAME}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (require.main === module) runWorkload(NAME, main);
