// bulwark-init's settings: what the injection puts in the init container's environment (the pod's
// identity through the Downward API, the server's URL, the token's path), read through one schema.
import { z } from "zod";
import { INIT_ENV, TOKEN_PATH } from "../core/permission";

function seconds(name: string, fallback: number, min: number) {
  return z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const value = Number(text);
      if (text.trim() === "" || !Number.isFinite(value) || value < min) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be a number of seconds >= ${min}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return value * 1000;
    });
}

const required = (name: string, what: string) =>
  z.string({ error: `${name} is required (${what})` }).min(1, `${name} is required (${what})`);

export const initSettingsSchema = z
  .object({
    [INIT_ENV.podName]: required(INIT_ENV.podName, "the pod name, from the Downward API"),
    [INIT_ENV.podNamespace]: required(
      INIT_ENV.podNamespace,
      "the pod namespace, from the Downward API",
    ),
    [INIT_ENV.podUid]: required(INIT_ENV.podUid, "the pod UID, from the Downward API"),
    [INIT_ENV.podIp]: required(INIT_ENV.podIp, "the pod IP, from the Downward API (status.podIP)"),
    [INIT_ENV.server]: z
      .string({ error: `${INIT_ENV.server} is required (the permission server's URL)` })
      .refine(v => /^https?:\/\/[^/]/.test(v), {
        message: `${INIT_ENV.server} must be an http:// or https:// URL`,
      }),
    [INIT_ENV.tokenPath]: z.string().min(1).default(TOKEN_PATH),
    [INIT_ENV.group]: z.string().optional(),
    BULWARK_INIT_WAIT_SECONDS: seconds("BULWARK_INIT_WAIT_SECONDS", 25, 0),
    BULWARK_INIT_RETRY_MAX_SECONDS: seconds("BULWARK_INIT_RETRY_MAX_SECONDS", 10, 0.01),
    BULWARK_INIT_REQUEST_TIMEOUT_SECONDS: seconds("BULWARK_INIT_REQUEST_TIMEOUT_SECONDS", 10, 1),
  })
  .transform(env => ({
    pod: {
      name: env[INIT_ENV.podName] as string,
      namespace: env[INIT_ENV.podNamespace] as string,
      uid: env[INIT_ENV.podUid] as string,
      ip: env[INIT_ENV.podIp] as string,
    },
    server: (env[INIT_ENV.server] as string).replace(/\/+$/, ""),
    tokenPath: env[INIT_ENV.tokenPath] as string,
    group: env[INIT_ENV.group] as string | undefined,
    waitMs: env.BULWARK_INIT_WAIT_SECONDS,
    retryMaxMs: env.BULWARK_INIT_RETRY_MAX_SECONDS,
    requestTimeoutMs: env.BULWARK_INIT_REQUEST_TIMEOUT_SECONDS,
  }));

export type InitSettings = z.output<typeof initSettingsSchema>;

export function loadInitSettings(
  env: NodeJS.ProcessEnv,
): { ok: true; settings: InitSettings } | { ok: false; message: string } {
  const values = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ""));
  const parsed = initSettingsSchema.safeParse(values);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? "settings");
  const message = issue?.message ?? "invalid";
  return { ok: false, message: message.includes(field) ? message : `${field}: ${message}` };
}
