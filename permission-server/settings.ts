// The permission server's settings: environment variables (flags override them: `--port 8443`
// sets BULWARK_PERMISSION_PORT), read through ONE zod schema whose keys are the variables' names,
// so a bad value is reported by the name the operator set.
import { hostname } from "node:os";
import { z } from "zod";
import type { Backoff } from "../core/backoff";
import {
  duration,
  loadEnv,
  logLevel,
  number,
  objectName,
  optionalNumber,
  optionalText,
  readFlags,
  type Loaded,
} from "../core/env-settings";

const cmdbParams = z
  .string()
  .default('{"resource":"cmdb/pods","action":"write"}')
  .transform((text, ctx) => {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        return value as Record<string, unknown>;
      }
    } catch {
      // reported below
    }
    ctx.addIssue({ code: "custom", message: "BULWARK_CMDB_PARAMS must be a JSON object" });
    return z.NEVER;
  });

/** Every variable the server reads, by name. */
export const settingsSchema = z
  .object({
    BULWARK_PERMISSION_PORT: number("BULWARK_PERMISSION_PORT", 8443, { min: 0, max: 65535 }),
    BULWARK_PERMISSION_HOST: z.string().default("0.0.0.0"),
    // Plain HTTP, /metrics only: scrapers need no CA. Unset: /metrics on the API port alone.
    BULWARK_PERMISSION_METRICS_PORT: optionalNumber("BULWARK_PERMISSION_METRICS_PORT", {
      min: 0,
      max: 65535,
    }),
    BULWARK_TLS_CERT_PATH: optionalText("BULWARK_TLS_CERT_PATH", "a PEM certificate file"),
    BULWARK_TLS_KEY_PATH: optionalText("BULWARK_TLS_KEY_PATH", "a PEM key file"),
    BULWARK_TLS_RELOAD_INTERVAL: duration("BULWARK_TLS_RELOAD_INTERVAL", "10s", 100),
    KUBECONFIG: z.string().optional(),
    BULWARK_NAMESPACE: objectName("BULWARK_NAMESPACE", "bulwark-system"),
    BULWARK_BREAKER_CONFIGMAP: objectName(
      "BULWARK_BREAKER_CONFIGMAP",
      "bulwark-permission-breakers",
    ),
    BULWARK_PERMISSION_AUDIENCE: z.string().min(1).default("bulwark-permission-server"),
    BULWARK_REPLICA_NAME: z.string().min(1).default(hostname()),
    BULWARK_BACKOFF_DURATION: duration("BULWARK_BACKOFF_DURATION", "2m", 1),
    BULWARK_BACKOFF_FACTOR: number("BULWARK_BACKOFF_FACTOR", 2, {
      min: 0,
      max: 100,
      integer: false,
    }),
    BULWARK_BACKOFF_JITTER: number("BULWARK_BACKOFF_JITTER", 1, {
      min: 0,
      max: 10,
      integer: false,
    }),
    BULWARK_BACKOFF_STEPS: number("BULWARK_BACKOFF_STEPS", 5, { min: 1, max: 1000 }),
    BULWARK_BACKOFF_CAP: duration("BULWARK_BACKOFF_CAP", "1h"),
    BULWARK_BREAKER_THRESHOLD: number("BULWARK_BREAKER_THRESHOLD", 3, { min: 1, max: 100 }),
    BULWARK_PROVIDER_BREAKER_FAILURES: number("BULWARK_PROVIDER_BREAKER_FAILURES", 5, {
      min: 1,
      max: 1000,
    }),
    BULWARK_PROVIDER_BREAKER_OPEN: duration("BULWARK_PROVIDER_BREAKER_OPEN", "30s", 1),
    BULWARK_GRANT_TIMEOUT: duration("BULWARK_GRANT_TIMEOUT", "10m", 1),
    BULWARK_POLL_INTERVAL: duration("BULWARK_POLL_INTERVAL", "2s", 1),
    BULWARK_RETRY_INTERVAL: duration("BULWARK_RETRY_INTERVAL", "1s", 1),
    BULWARK_RETRY_MAX_INTERVAL: duration("BULWARK_RETRY_MAX_INTERVAL", "30s", 1),
    BULWARK_CLAIM_TTL: duration("BULWARK_CLAIM_TTL", "30s", 1000),
    BULWARK_LONG_POLL_MAX: duration("BULWARK_LONG_POLL_MAX", "30s", 0),
    BULWARK_PRUNE_INTERVAL: duration("BULWARK_PRUNE_INTERVAL", "1m", 1000),
    BULWARK_REPLICAS: number("BULWARK_REPLICAS", 1, { min: 1, max: 1000 }),
    BULWARK_CMDB_PROVIDER: objectName("BULWARK_CMDB_PROVIDER", "").optional(),
    BULWARK_CMDB_PARAMS: cmdbParams,
    LOG_LEVEL: logLevel(),
  })
  .superRefine((env, ctx) => {
    if ((env.BULWARK_TLS_CERT_PATH === undefined) !== (env.BULWARK_TLS_KEY_PATH === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["BULWARK_TLS_CERT_PATH"],
        message: "BULWARK_TLS_CERT_PATH and BULWARK_TLS_KEY_PATH must be set together (or neither)",
      });
    }
  })
  .transform(env => ({
    port: env.BULWARK_PERMISSION_PORT,
    host: env.BULWARK_PERMISSION_HOST,
    /** The plain-HTTP /metrics port (0: any free port); undefined: not served. */
    metricsPort: env.BULWARK_PERMISSION_METRICS_PORT,
    tls:
      env.BULWARK_TLS_CERT_PATH && env.BULWARK_TLS_KEY_PATH
        ? {
            certPath: env.BULWARK_TLS_CERT_PATH,
            keyPath: env.BULWARK_TLS_KEY_PATH,
            reloadIntervalMs: env.BULWARK_TLS_RELOAD_INTERVAL,
          }
        : undefined,
    kubeconfigPath: env.KUBECONFIG,
    namespace: env.BULWARK_NAMESPACE,
    breakerConfigMap: env.BULWARK_BREAKER_CONFIGMAP,
    audience: env.BULWARK_PERMISSION_AUDIENCE,
    replica: env.BULWARK_REPLICA_NAME,
    /** Replicas sharing each provider's rate limit and concurrency (each takes 1/N). */
    replicas: env.BULWARK_REPLICAS,
    backoff: {
      durationMs: env.BULWARK_BACKOFF_DURATION,
      factor: env.BULWARK_BACKOFF_FACTOR,
      jitter: env.BULWARK_BACKOFF_JITTER,
      steps: env.BULWARK_BACKOFF_STEPS,
      capMs: env.BULWARK_BACKOFF_CAP,
    } satisfies Backoff,
    breakerThreshold: env.BULWARK_BREAKER_THRESHOLD,
    providerBreaker: {
      failures: env.BULWARK_PROVIDER_BREAKER_FAILURES,
      openMs: env.BULWARK_PROVIDER_BREAKER_OPEN,
    },
    grantTimeoutMs: env.BULWARK_GRANT_TIMEOUT,
    pollIntervalMs: env.BULWARK_POLL_INTERVAL,
    retryIntervalMs: env.BULWARK_RETRY_INTERVAL,
    retryMaxIntervalMs: env.BULWARK_RETRY_MAX_INTERVAL,
    claimTtlMs: env.BULWARK_CLAIM_TTL,
    longPollMaxMs: env.BULWARK_LONG_POLL_MAX,
    pruneIntervalMs: env.BULWARK_PRUNE_INTERVAL,
    cmdb: env.BULWARK_CMDB_PROVIDER
      ? { provider: env.BULWARK_CMDB_PROVIDER, params: env.BULWARK_CMDB_PARAMS }
      : undefined,
    logLevel: env.LOG_LEVEL,
  }));

export type Settings = z.output<typeof settingsSchema>;

/** Flags that set a variable: `--port 9000` is BULWARK_PERMISSION_PORT=9000. */
const FLAGS: Record<string, string> = {
  port: "BULWARK_PERMISSION_PORT",
  "metrics-port": "BULWARK_PERMISSION_METRICS_PORT",
  host: "BULWARK_PERMISSION_HOST",
  namespace: "BULWARK_NAMESPACE",
  kubeconfig: "KUBECONFIG",
};

export type SettingsResult = Loaded<Settings>;

/** Settings from the environment and flags; `message` is one line naming the first bad setting. */
export function loadSettings(env: NodeJS.ProcessEnv, argv: readonly string[]): SettingsResult {
  const flags = readFlags(argv, FLAGS);
  if ("message" in flags) return { ok: false, message: flags.message };
  const values: Record<string, string | undefined> = { ...env };
  for (const [name, value] of Object.entries(flags.values)) values[FLAGS[name] ?? name] = value;
  return loadEnv(settingsSchema, values);
}
