// The permission server's CA bundle as the Pepr module knows it. The module runs in its own
// namespace and cannot mount the serving Secret from Bulwark's, so it reads that Secret's ca.crt
// through the API (it may already read Secrets) — or a file, for a bundle mounted by hand. The
// bundle is cached and re-read in the background once stale, so a renewed CA reaches new pods
// and the watcher's revoke calls without a restart and admission does not wait on the API. A
// source that is missing or not PEM keeps the last good bundle; each distinct problem is logged once.
import { readFile } from "node:fs/promises";
import { Log } from "pepr";
import { parseCaBundle } from "../../core/permission";
import { formatErrors } from "../../core/result";
import { describeError } from "../../kube/api-errors";
import { SECRETS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";

export const CA_SECRET_ENV = "BULWARK_PERMISSION_CA_SECRET";
export const CA_PATH_ENV = "BULWARK_PERMISSION_CA_PATH";
/** The serving Secret's key holding the CA (cert-manager's and `bulwark permission tls`'s). */
export const CA_KEY = "ca.crt";

export interface CaBundleOptions {
  /** Names the source in messages: the variable that set it. */
  field: string;
  read: () => Promise<string>;
  ttlMs?: number;
  now?: () => number;
  warn?: (problem: string) => void;
}

export class CaBundle {
  #good: string | undefined;
  #readAt = -Infinity;
  #problem = "";
  #reading: Promise<void> | undefined;

  constructor(private readonly options: CaBundleOptions | undefined) {}

  get configured(): boolean {
    return this.options !== undefined;
  }

  /** The bundle to trust; undefined when none is configured (or none was ever readable). */
  async current(): Promise<string | undefined> {
    const { options } = this;
    if (!options) return undefined;
    const now = (options.now ?? Date.now)();
    if (now - this.#readAt >= (options.ttlMs ?? 30_000)) {
      this.#readAt = now;
      this.#reading ??= this.#reload(options).finally(() => (this.#reading = undefined));
    }
    // Only the first read is waited for; later ones refresh behind the cached bundle.
    if (this.#good === undefined) await this.#reading;
    return this.#good;
  }

  async #reload(options: CaBundleOptions): Promise<void> {
    let problem = "";
    try {
      const parsed = parseCaBundle(await options.read(), options.field);
      if (parsed.ok) this.#good = parsed.value;
      else problem = formatErrors(parsed.errors);
    } catch (error) {
      problem = `${options.field}: ${describeError(error)}`;
    }
    if (problem && problem !== this.#problem) (options.warn ?? warnLog)(problem);
    this.#problem = problem;
  }
}

function warnLog(problem: string): void {
  Log.warn({ reason: problem }, "permission server CA bundle unusable; keeping the last good one");
}

/** `namespace/name` of the serving Secret, or why it is not one. */
export function parseSecretRef(text: string): { namespace: string; name: string } | string {
  const [namespace, name, ...rest] = text.split("/");
  if (!namespace || !name || rest.length > 0) {
    return `${CA_SECRET_ENV} must be NAMESPACE/NAME of the serving Secret; got ${JSON.stringify(text)}`;
  }
  return { namespace, name };
}

/** The CA source the module's environment names (the Secret, a file, or none). */
export function caBundleFromEnv(env: NodeJS.ProcessEnv): CaBundle {
  const secret = env[CA_SECRET_ENV] || undefined;
  const path = env[CA_PATH_ENV] || undefined;
  if (secret && path) throw new Error(`${CA_SECRET_ENV} and ${CA_PATH_ENV} are both set; set one`);
  if (path) return new CaBundle({ field: CA_PATH_ENV, read: () => readFile(path, "utf8") });
  if (!secret) return new CaBundle(undefined);
  const ref = parseSecretRef(secret);
  if (typeof ref === "string") throw new Error(ref);
  return new CaBundle({
    field: CA_SECRET_ENV,
    read: async () => {
      const found = await keptAliveApi().get<{ data?: Record<string, string> }>(
        resourcePath(SECRETS, ref),
      );
      const value = found.data?.[CA_KEY];
      if (value === undefined) throw new Error(`Secret ${secret} has no ${CA_KEY}`);
      return Buffer.from(value, "base64").toString("utf8");
    },
  });
}
