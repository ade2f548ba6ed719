// bulwark-init's settings: what the injection puts in the init container's environment (the pod's
// identity through the Downward API, the server's URL, the token's path), read through one schema.
import { z } from "zod";
import { INIT_ENV, parseCaBundle, TOKEN_PATH } from "../core/permission";
import { formatErrors } from "../core/result";
import { isSlash, trimEndWhere } from "../core/trim";
import { loadEnv, required, seconds, type Loaded } from "../core/env-settings";

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
    [INIT_ENV.ca]: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return undefined;
        const parsed = parseCaBundle(text, INIT_ENV.ca);
        if (parsed.ok) return parsed.value;
        ctx.addIssue({ code: "custom", message: formatErrors(parsed.errors) });
        return z.NEVER;
      }),
    [INIT_ENV.caPath]: z.string().optional(),
    BULWARK_INIT_WAIT_SECONDS: seconds("BULWARK_INIT_WAIT_SECONDS", 25, 0),
    BULWARK_INIT_RETRY_MAX_SECONDS: seconds("BULWARK_INIT_RETRY_MAX_SECONDS", 10, 0.01),
    BULWARK_INIT_REQUEST_TIMEOUT_SECONDS: seconds("BULWARK_INIT_REQUEST_TIMEOUT_SECONDS", 10, 1),
  })
  .superRefine((env, ctx) => {
    const ca = env[INIT_ENV.ca] ?? env[INIT_ENV.caPath];
    if (env[INIT_ENV.ca] !== undefined && env[INIT_ENV.caPath] !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: [INIT_ENV.caPath],
        message: `${INIT_ENV.caPath} and ${INIT_ENV.ca} are both set; set one`,
      });
    } else if (ca !== undefined && !String(env[INIT_ENV.server]).startsWith("https:")) {
      ctx.addIssue({
        code: "custom",
        path: [env[INIT_ENV.ca] !== undefined ? INIT_ENV.ca : INIT_ENV.caPath],
        message: `a CA bundle needs an https:// ${INIT_ENV.server} (plain http would verify nothing)`,
      });
    }
  })
  .transform(env => ({
    pod: {
      name: env[INIT_ENV.podName] as string,
      namespace: env[INIT_ENV.podNamespace] as string,
      uid: env[INIT_ENV.podUid] as string,
      ip: env[INIT_ENV.podIp] as string,
    },
    server: trimEndWhere(env[INIT_ENV.server] as string, isSlash),
    tokenPath: env[INIT_ENV.tokenPath] as string,
    group: env[INIT_ENV.group] as string | undefined,
    ca: caSource(env[INIT_ENV.ca], env[INIT_ENV.caPath]),
    waitMs: env.BULWARK_INIT_WAIT_SECONDS,
    retryMaxMs: env.BULWARK_INIT_RETRY_MAX_SECONDS,
    requestTimeoutMs: env.BULWARK_INIT_REQUEST_TIMEOUT_SECONDS,
  }));

/** Where the CA that signs the server's certificate comes from; none: Node's public roots. */
export type CaSource = { pem: string } | { path: string } | undefined;

function caSource(pem: string | undefined, path: string | undefined): CaSource {
  if (pem !== undefined) return { pem };
  return path === undefined ? undefined : { path };
}

export type InitSettings = z.output<typeof initSettingsSchema>;

/** The CA bundle's text (read from its file when given by path), or why it is unusable. */
export function loadCa(
  source: CaSource,
  readFile: (path: string) => string,
): { ok: true; ca: string | undefined } | { ok: false; message: string } {
  if (source === undefined) return { ok: true, ca: undefined };
  if ("pem" in source) return { ok: true, ca: source.pem };
  let text: string;
  try {
    text = readFile(source.path);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `${INIT_ENV.caPath}: cannot read ${source.path}: ${why}` };
  }
  const parsed = parseCaBundle(text, INIT_ENV.caPath);
  return parsed.ok
    ? { ok: true, ca: parsed.value }
    : { ok: false, message: `${formatErrors(parsed.errors)} (${source.path})` };
}

export function loadInitSettings(env: NodeJS.ProcessEnv): Loaded<InitSettings> {
  return loadEnv(initSettingsSchema, env);
}
