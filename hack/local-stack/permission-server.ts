// The permission server in the local stack (`npm start`): the namespace for its breaker
// ConfigMap, one server process on 127.0.0.1:8444 (BULWARK_PERMISSION_PORT overrides), a demo
// authorization API (the tests' stand-in, in this process) with a PermissionProvider `demo-authz`
// pointing at it, and the Pepr watcher's identity for the revoke call. The Pepr module must be
// started with `permissionServerEnv(...)` in its environment (BULWARK_PERMISSION_SERVER and
// BULWARK_REVOKE_TOKEN_PATH), so injected pods and revocations reach this server.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { waitUntil } from "../../test/harness/wait";
import { startProcess } from "../control-plane/processes";
import { startAuthzApi } from "../../test/harness/authz-api";
import { issueWatcherToken } from "../../test/harness/watcher-identity";
import type { LocalWorkload, LocalWorkloadContext } from "./workload";

const ROOT = join(__dirname, "..", "..");
const NAMESPACE = "bulwark-system";

function port(env: NodeJS.ProcessEnv): string {
  return env.BULWARK_PERMISSION_PORT ?? "8444";
}

/**
 * What the Pepr module's environment needs so that its injected init containers call this server
 * and its revocations are authenticated: pass it to startPeprModule's `env`. Call it before
 * starting the Pepr module; `startPermissionServer` writes the token file it names.
 */
export function permissionServerEnv(
  context: Pick<LocalWorkloadContext, "dir" | "env">,
): Record<string, string> {
  const env = { ...process.env, ...context.env };
  return {
    BULWARK_PERMISSION_SERVER: `http://127.0.0.1:${port(env)}`,
    BULWARK_REVOKE_TOKEN_PATH: join(context.dir, "pepr-watcher-token"),
  };
}

export async function startPermissionServer(context: LocalWorkloadContext): Promise<LocalWorkload> {
  mkdirSync(context.dir, { recursive: true });
  const env = { ...process.env, ...context.env };
  const kc = loadKubeConfig(context.kubeconfigPath);
  await applyOrThrow(kc, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }]);
  const { BULWARK_REVOKE_TOKEN_PATH: tokenPath, BULWARK_PERMISSION_SERVER: url } =
    permissionServerEnv(context);
  await issueWatcherToken(context.kubeconfigPath, tokenPath as string);

  const authz = await startAuthzApi({ grantLatencyMs: Number(env.BULWARK_DEMO_GRANT_MS ?? 1000) });
  await applyOrThrow(kc, [
    {
      apiVersion: "bulwark.dev/v1alpha1",
      kind: "PermissionProvider",
      metadata: { name: "demo-authz" },
      spec: { type: "http", address: authz.url },
    } as KubernetesObject,
  ]);

  const logFile = join(context.dir, "bulwark-permission-server.log");
  const server = startProcess(
    "bulwark-permission-server",
    process.execPath,
    ["--import", "tsx", join(ROOT, "permission-server", "main.ts")],
    {
      cwd: ROOT,
      logFile,
      env: {
        ...env,
        KUBECONFIG: context.kubeconfigPath,
        BULWARK_PERMISSION_HOST: "127.0.0.1",
        BULWARK_PERMISSION_PORT: port(env),
        BULWARK_NAMESPACE: NAMESPACE,
        BULWARK_REPLICA_NAME: "bulwark-permission-server-0",
      },
    },
  );
  let exited: number | string | undefined;
  void server.exited.then(code => (exited = code));
  await waitUntil(`the permission server at ${url}`, async () => {
    if (exited !== undefined)
      throw new Error(`the permission server exited (${exited}); see ${logFile}`);
    return (await fetch(`${url}/healthz`)).ok;
  });
  context.log(`permission server on ${url}`);
  return {
    processes: [server],
    stop: async () => {
      await server.stop(10_000);
      await authz.close();
    },
    lines: [
      `  permissions    ${url} (/healthz, /metrics; breakers in ConfigMap ${NAMESPACE}/bulwark-permission-breakers)`,
      `                 demo authorization API ${authz.url} (PermissionProvider demo-authz); log ${logFile}`,
      "                 pods that name a PermissionGroup get bulwark-init, which the pod runner runs (README: Try it)",
    ],
  };
}
