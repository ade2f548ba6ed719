// The gateway in the local stack (`npm start`): makes sure the IngressClass `bulwark` (controller
// bulwark.dev/gateway) exists, then runs one gateway process as `bulwark-gateway-0` on
// 127.0.0.1:8080 (HTTP), 8443 (HTTPS) and 9090 (admin). BULWARK_HTTP_PORT, BULWARK_HTTPS_PORT,
// BULWARK_ADMIN_PORT (and every other gateway setting) in `env` or the environment override that.
import { join } from "node:path";
import { mkdirSync, readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { INGRESS_CLASS, INGRESS_CONTROLLER } from "../../core/names";
import { applyOrThrow, loadKubeConfig, waitUntil } from "../control-plane/kube";
import { startProcess, type ManagedProcess } from "../control-plane/processes";
import type { LocalWorkload, LocalWorkloadContext } from "./workload";

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

/** Resolves once `url` (an admin /readyz) answers 200; fails early if the process exits. */
export async function waitReady(
  url: string,
  gateway: ManagedProcess,
  timeoutMs = 60_000,
): Promise<void> {
  let exited: number | string | undefined;
  void gateway.exited.then(code => (exited = code));
  await waitUntil(
    `${gateway.name} to be ready at ${url}`,
    async () => {
      if (exited !== undefined) {
        const tail = readFileSync(gateway.logFile, "utf8").trimEnd().split("\n").slice(-10);
        throw new Error(`${gateway.name} exited (${exited}):\n${tail.join("\n")}`);
      }
      const response = await fetch(url);
      return response.status === 200;
    },
    timeoutMs,
  );
}

export async function startGateway(context: LocalWorkloadContext): Promise<LocalWorkload> {
  const env = { ...process.env, ...context.env };
  const host = env.BULWARK_LISTEN_HOST ?? "127.0.0.1";
  const ports = {
    http: env.BULWARK_HTTP_PORT ?? "8080",
    https: env.BULWARK_HTTPS_PORT ?? "8443",
    admin: env.BULWARK_ADMIN_PORT ?? "9090",
  };
  await applyOrThrow(loadKubeConfig(context.kubeconfigPath), [ingressClass()]);
  context.log(`IngressClass ${INGRESS_CLASS} (controller ${INGRESS_CONTROLLER}) is in place`);
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
  await waitReady(`http://${host}:${ports.admin}/readyz`, gateway);
  return {
    processes: [gateway],
    stop: () => gateway.stop(15_000),
    lines: [
      `  gateway        ${podName}: http://${host}:${ports.http}  https://${host}:${ports.https}  admin http://${host}:${ports.admin}/healthz`,
      `                 Ingresses of class ${INGRESS_CLASS} route there; an EndpointSlice naming ${machineAddress()}:<port> reaches a local process (the API server refuses 127.0.0.1)`,
      `                 per-host traffic metrics at http://${host}:${ports.admin}/metrics; canary, CORS, robots, ssl-redirect and rewrite annotations apply`,
      `                 log ${logFile} (one JSON access line per request; BULWARK_ACCESS_LOG=false turns it off)`,
    ],
  };
}
