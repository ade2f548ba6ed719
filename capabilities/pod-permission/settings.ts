// The pod-permission capability's settings, from the module's environment (manifests set them).
import { z } from "zod";
import { parseInjectConfig, TOKEN_EXPIRATION, type InjectConfig } from "../../core/permission";
import { integer, readEnv } from "../../core/env-settings";
import { formatErrors } from "../../core/result";
import { CaBundle, caBundleFromEnv } from "./ca-bundle";

export interface PermissionSettings {
  inject: InjectConfig;
  /** After this long past deletionTimestamp, the finalizer goes even if revocation failed. */
  revokeDeadlineMs: number;
  /** How often the watcher lists terminating pods it may have missed. */
  sweepMs: number;
  /** Per-attempt timeout of a revoke call. */
  revokeTimeoutMs: number;
  /**
   * The watcher's own service-account token, sent as the revoke call's bearer token: the
   * permission server reviews it and asks whether that account may patch the pod.
   */
  revokeTokenPath: string;
  /** The CA that signs the permission server's certificate: injected, and trusted for revokes. */
  ca: CaBundle;
}

export const permissionTimingsSchema = z.object({
  BULWARK_PERMISSION_TOKEN_SECONDS: integer(
    "BULWARK_PERMISSION_TOKEN_SECONDS",
    3600,
    TOKEN_EXPIRATION.min,
    TOKEN_EXPIRATION.max,
  ),
  BULWARK_REVOKE_DEADLINE_SECONDS: integer("BULWARK_REVOKE_DEADLINE_SECONDS", 3600, 1, 30 * 86_400),
  BULWARK_PERMISSION_SWEEP_SECONDS: integer("BULWARK_PERMISSION_SWEEP_SECONDS", 60, 1, 86_400),
  BULWARK_REVOKE_TIMEOUT_SECONDS: integer("BULWARK_REVOKE_TIMEOUT_SECONDS", 10, 1, 600),
});

export function loadSettings(env: NodeJS.ProcessEnv = process.env): PermissionSettings {
  const t = readEnv(permissionTimingsSchema, env, "pod-permission");
  const inject = parseInjectConfig({
    image: env.BULWARK_INIT_IMAGE ?? "ghcr.io/bulwark-dev/bulwark:0.1.0",
    serverUrl:
      env.BULWARK_PERMISSION_SERVER ?? "https://bulwark-permission-server.bulwark-system.svc:8443",
    audience: env.BULWARK_PERMISSION_AUDIENCE ?? "bulwark-permission-server",
    tokenExpirationSeconds: t.BULWARK_PERMISSION_TOKEN_SECONDS,
    ownNamespace: env.BULWARK_NAMESPACE ?? "bulwark-system",
  });
  if (!inject.ok) throw new Error(`pod-permission settings: ${formatErrors(inject.errors)}`);
  const ca = caBundleFor(env, inject.value.serverUrl);
  return {
    inject: inject.value,
    revokeDeadlineMs: t.BULWARK_REVOKE_DEADLINE_SECONDS * 1000,
    sweepMs: t.BULWARK_PERMISSION_SWEEP_SECONDS * 1000,
    revokeTimeoutMs: t.BULWARK_REVOKE_TIMEOUT_SECONDS * 1000,
    revokeTokenPath:
      env.BULWARK_REVOKE_TOKEN_PATH ?? "/var/run/secrets/kubernetes.io/serviceaccount/token",
    ca,
  };
}

/** The CA source the environment names; refused with a plain-http server, where it verifies nothing. */
function caBundleFor(env: NodeJS.ProcessEnv, serverUrl: string): CaBundle {
  const ca = caBundleFromEnv(env);
  if (ca.configured && !serverUrl.startsWith("https:")) {
    throw new Error(
      `pod-permission settings: a CA bundle is configured but BULWARK_PERMISSION_SERVER is ${serverUrl}; a CA bundle needs an https:// server`,
    );
  }
  return ca;
}
