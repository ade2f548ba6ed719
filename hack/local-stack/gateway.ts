// The gateway in the local stack (`npm start`): makes sure the IngressClass `bulwark` (controller
// bulwark.dev/gateway) exists, then runs one gateway process as `bulwark-gateway-0` on
// 127.0.0.1:8080 (HTTP), 8443 (HTTPS) and 9090 (admin). BULWARK_HTTP_PORT, BULWARK_HTTPS_PORT,
// BULWARK_ADMIN_PORT (and every other gateway setting) in `env` or the environment override that.
import { join } from "node:path";
import { mkdirSync, readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { INGRESS_CLASS, INGRESS_CONTROLLER } from "../../core/names";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { waitUntil } from "../../test/harness/wait";
import { startProcess, type ManagedProcess } from "../control-plane/processes";
import type { LocalWorkload, LocalWorkloadContext } from "./workload";
import type { KubernetesObject } from "@kubernetes/client-node";
import {
  DEFAULT_PUBLISHER_NAMESPACES,
  GUARD_MODE_VARIABLES,
  parseGuardMode,
  parsePublisherNamespaces,
} from "../../core/checksum";
import { publisherPolicyObjects } from "../../capabilities/ingress-guard/publisher-policy";
import { GUARDED_KINDS, type GuardedKind } from "../../gateway/selection/compose";

const ROOT = join(__dirname, "..", "..");

/**
 * This machine's first non-loopback IPv4 address. The API server refuses loopback addresses in
 * EndpointSlices (`may not be in the loopback range`), so a local backend is named by this one.
 */
export function machineAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find(a => a.family === "IPv4" && !a.internal);
    if (found) return found.address;
  }
  throw new Error("no non-loopback IPv4 address: EndpointSlices cannot name a local backend");
}

/** The IngressClass the gateway serves; server-side applied, so running twice changes nothing. */
export function ingressClass() {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: { name: INGRESS_CLASS },
    spec: { controller: INGRESS_CONTROLLER },
  };
}

/** The publisher namespaces, as the gateway and the CLI read them; the default when unset or bad. */
function publisherNamespaceNames(env: NodeJS.ProcessEnv): string[] {
  const parsed = parsePublisherNamespaces(env.BULWARK_CHECKSUM_PUBLISHER_NAMESPACES);
  return [...(parsed.ok ? parsed.value : DEFAULT_PUBLISHER_NAMESPACES)];
}

export interface GatewayProcessOptions {
  kubeconfigPath: string;
  podName: string;
  stateDir: string;
  logFile: string;
  env: NodeJS.ProcessEnv;
}

/** One gateway process (also used by the integration tests and the benchmark). */
export function startGatewayProcess(options: GatewayProcessOptions): ManagedProcess {
  mkdirSync(options.stateDir, { recursive: true });
  return startProcess(
    options.podName,
    process.execPath,
    ["--import", "tsx", join(ROOT, "gateway", "main.ts")],
    {
      cwd: ROOT,
      logFile: options.logFile,
      env: {
        ...process.env,
        BULWARK_LISTEN_HOST: "127.0.0.1",
        ...options.env,
        KUBECONFIG: options.kubeconfigPath,
        BULWARK_POD_NAME: options.podName,
        BULWARK_STATE_DIR: options.stateDir,
      },
    },
  );
}

/** Rejects with the log's tail once `gateway` exits; never resolves otherwise. */
function exitFailure(gateway: ManagedProcess): Promise<never> {
  return gateway.exited.then(code => {
    const tail = readFileSync(gateway.logFile, "utf8").trimEnd().split("\n").slice(-10);
    throw new Error(`${gateway.name} exited (${code}):\n${tail.join("\n")}`);
  });
}

/** Polls `probe` until it gives a value; fails at once, with its log, if the process exits. */
async function whileRunning<T>(
  gateway: ManagedProcess,
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  let running = true;
  const exit = exitFailure(gateway);
  exit.catch(() => (running = false));
  const polled = waitUntil(what, async () => (running ? probe() : true), timeoutMs);
  const value = await Promise.race([polled, exit]);
  return value as T;
}

/** Resolves once `url` (an admin /readyz) answers 200; fails early if the process exits. */
export async function waitReady(
  url: string,
  gateway: ManagedProcess,
  timeoutMs = 60_000,
): Promise<void> {
  await whileRunning(
    gateway,
    `${gateway.name} to be ready at ${url}`,
    async () => (await fetch(url)).status === 200,
    timeoutMs,
  );
}

interface GatewayHealth {
  guard: Partial<Record<GuardedKind, { state: string }>>;
  apiServer?: { resources: { synced: boolean }[] };
}

/**
 * Ready, or waiting for an attestation: with the guard enforcing and nothing published, /readyz
 * stays 503 by design. That is told apart from a gateway that cannot start by its /healthz: every
 * resource listed, and an enforced kind that no checksum object matches.
 */
export async function waitServing(
  admin: string,
  gateway: ManagedProcess,
  enforced: readonly GuardedKind[],
  timeoutMs = 60_000,
): Promise<"ready" | "awaiting-checksum"> {
  return whileRunning(
    gateway,
    `${gateway.name} to be ready at ${admin}/readyz`,
    async () => {
      if ((await fetch(`${admin}/readyz`)).status === 200) return "ready" as const;
      if (enforced.length === 0) return undefined;
      const health = (await (await fetch(`${admin}/healthz`)).json()) as GatewayHealth;
      const resources = health.apiServer?.resources ?? [];
      const synced = resources.length > 0 && resources.every(r => r.synced);
      const unattested = enforced.some(kind => health.guard[kind]?.state !== "matched");
      return synced && unattested ? ("awaiting-checksum" as const) : undefined;
    },
    timeoutMs,
  );
}

/** The kinds the gateway will enforce the guard for, read from the variables it reads. */
export function enforcedKinds(env: NodeJS.ProcessEnv): GuardedKind[] {
  return GUARDED_KINDS.filter(kind => {
    const name = GUARD_MODE_VARIABLES[kind];
    const mode = parseGuardMode(env[name], name);
    return mode.ok && mode.value === "enforce";
  });
}

/** What to do when the gateway waits for an attestation: the publish command per kind. */
export function awaitingChecksumLines(
  enforced: readonly GuardedKind[],
  publisherNamespace: string,
): string[] {
  const variables = enforced.map(kind => `${GUARD_MODE_VARIABLES[kind]}=enforce`).join(", ");
  return [
    `  guard          enforcing (${variables}): the gateway serves nothing, and /readyz says 503, until a published checksum matches the cluster`,
    "                 attest what is there now (with the KUBECONFIG above), and again after every change:",
    ...enforced.map(
      kind =>
        `                   ./bin/bulwark.js checksum publish --kind ${kind} -n ${publisherNamespace}`,
    ),
  ];
}

/** Says once, in the stack's log, when the gateway turns ready after waiting for a checksum. */
function announceReady(admin: string, gateway: ManagedProcess, log: (m: string) => void): void {
  const timer = setInterval(() => {
    fetch(`${admin}/readyz`)
      .then(response => {
        if (response.status !== 200) return;
        clearInterval(timer);
        log(`${gateway.name} is ready: a published checksum matches what it serves`);
      })
      .catch(() => {});
  }, 1000);
  timer.unref();
  void gateway.exited.then(() => clearInterval(timer));
}

export async function startGateway(context: LocalWorkloadContext): Promise<LocalWorkload> {
  const env = { ...process.env, ...context.env };
  const host = env.BULWARK_LISTEN_HOST ?? "127.0.0.1";
  const ports = {
    http: env.BULWARK_HTTP_PORT ?? "8080",
    https: env.BULWARK_HTTPS_PORT ?? "8443",
    admin: env.BULWARK_ADMIN_PORT ?? "9090",
  };
  const publishers = publisherNamespaceNames(env);
  await applyOrThrow(loadKubeConfig(context.kubeconfigPath), [
    ingressClass(),
    ...publishers.map(name => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
    ...(publisherPolicyObjects(publishers) as KubernetesObject[]),
  ]);
  context.log(`IngressClass ${INGRESS_CLASS} (controller ${INGRESS_CONTROLLER}) is in place`);
  context.log(`checksum objects are trusted in ${publishers.join(", ")} (and refused elsewhere)`);
  const podName = "bulwark-gateway-0";
  const logFile = join(context.dir, `${podName}.log`);
  const gateway = startGatewayProcess({
    kubeconfigPath: context.kubeconfigPath,
    podName,
    stateDir: join(context.dir, "state"),
    logFile,
    env: {
      ...context.env,
      BULWARK_LISTEN_HOST: host,
      BULWARK_HTTP_PORT: ports.http,
      BULWARK_HTTPS_PORT: ports.https,
      BULWARK_ADMIN_PORT: ports.admin,
      // ssl-redirect sends clients to the port they can reach here, not the production 443.
      BULWARK_SSL_REDIRECT_PORT: env.BULWARK_SSL_REDIRECT_PORT ?? ports.https,
    },
  });
  const admin = `http://${host}:${ports.admin}`;
  const enforced = enforcedKinds(env);
  const serving = await waitServing(admin, gateway, enforced);
  if (serving === "awaiting-checksum") announceReady(admin, gateway, context.log);
  return {
    processes: [gateway],
    stop: () => gateway.stop(15_000),
    lines: [
      ...(serving === "awaiting-checksum" ? awaitingChecksumLines(enforced, publishers[0]!) : []),
      `  gateway        ${podName}: http://${host}:${ports.http}  https://${host}:${ports.https}  admin http://${host}:${ports.admin}/healthz`,
      `                 Ingresses of class ${INGRESS_CLASS} route there; an EndpointSlice naming ${machineAddress()}:<port> reaches a local process (the API server refuses 127.0.0.1)`,
      `                 per-host traffic metrics at http://${host}:${ports.admin}/metrics; canary, CORS, robots, ssl-redirect and rewrite annotations apply`,
      `                 log ${logFile} (one JSON access line per request; BULWARK_ACCESS_LOG=false turns it off)`,
    ],
  };
}
