// Builds a ready Provider from a PermissionProvider object and its credentials: the spec parsed
// (defaults applied), the credentials checked for its type, and every call wrapped in the
// provider's limiter (rate limit and concurrency from the spec).
import type { ProviderType } from "../../core/permission/params";
import {
  parsePermissionProviderSpec,
  type PermissionProviderSpec,
} from "../../core/permission/spec";
import { fail, ok, type FieldError, type Result } from "../../core/result";
import { HttpProvider, parseHttpCredentials } from "./http";
import { ProviderLimiter, type LimiterClock } from "./limiter";
import { MysqlProvider, parseMysqlCredentials } from "./mysql";
import type { GrantRequest, GrantState, Provider, RevokeRequest } from "./types";

/** The parts of a PermissionProvider object the registry reads. */
export interface PermissionProviderObject {
  metadata?: { name?: string };
  spec?: unknown;
}

export interface BuildProviderOptions {
  /**
   * This process's share of the provider's rate limit and concurrency, in (0, 1]: with N
   * permission-server replicas each running jobs, pass 1 / N so that together they stay within
   * the limit. 1 by default.
   */
  share?: number;
  clock?: LimiterClock;
  /** For the http provider; the global fetch by default. */
  fetch?: typeof fetch;
}

/** A provider whose every call waits its turn in `limiter` (so callers need no wrapping). */
export interface LimitedProvider extends Provider {
  readonly type: ProviderType;
  readonly spec: PermissionProviderSpec;
  readonly limiter: ProviderLimiter;
}

/** A Secret's values as strings: `data` base64-decoded, `stringData` as is (it wins). */
export function secretValues(
  secret: { data?: Record<string, string>; stringData?: Record<string, string> } | undefined,
): Record<string, string> | undefined {
  if (!secret) return undefined;
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    values[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return { ...values, ...secret.stringData };
}

/** Every call of `provider` through `limiter`; close() closes both. */
export function limitProvider(provider: Provider, limiter: ProviderLimiter): Provider {
  return {
    name: provider.name,
    grant: (request: GrantRequest, signal: AbortSignal): Promise<GrantState> =>
      limiter.run(() => provider.grant(request, signal), signal),
    poll: (request: GrantRequest, jobId: string, signal: AbortSignal): Promise<GrantState> =>
      limiter.run(() => provider.poll(request, jobId, signal), signal),
    revoke: (request: RevokeRequest, signal: AbortSignal): Promise<void> =>
      limiter.run(() => provider.revoke(request, signal), signal),
    close: async () => {
      limiter.close();
      await provider.close();
    },
  };
}

function credentialErrors(spec: PermissionProviderSpec, errors: FieldError[]): FieldError[] {
  const ref = spec.credentialsSecretRef;
  const where = ref ? `Secret ${ref.namespace}/${ref.name}` : "credentials";
  return errors.map(e => ({ field: `${where} data.${e.field}`, message: e.message }));
}

function baseProvider(
  name: string,
  spec: PermissionProviderSpec,
  credentials: Readonly<Record<string, string>> | undefined,
  options: BuildProviderOptions,
): Result<Provider> {
  const timeoutMs = spec.timeoutSeconds * 1000;
  if (spec.type === "http") {
    // Credentials only count when the spec names a Secret.
    const auth = parseHttpCredentials(spec.credentialsSecretRef ? credentials : undefined);
    if (!auth.ok) return fail(credentialErrors(spec, auth.errors));
    return ok(
      new HttpProvider({
        name,
        address: spec.address,
        timeoutMs,
        auth: auth.value,
        fetch: options.fetch,
      }),
    );
  }
  if (credentials === undefined) {
    const ref = spec.credentialsSecretRef;
    return fail([
      {
        field: `Secret ${ref.namespace}/${ref.name}`,
        message: "is missing (spec.credentialsSecretRef)",
      },
    ]);
  }
  const parsed = parseMysqlCredentials(credentials);
  if (!parsed.ok) return fail(credentialErrors(spec, parsed.errors));
  return ok(
    new MysqlProvider({ name, address: spec.address, timeoutMs, credentials: parsed.value }),
  );
}

/**
 * The provider for a PermissionProvider object, given the values of the Secret its spec names
 * (see `secretValues`; undefined when it names none or the Secret is missing). Every problem is
 * returned with its field: `metadata.name`, `spec.…`, or `Secret <ns>/<name> data.<key>`.
 */
export function buildProvider(
  object: PermissionProviderObject,
  credentials: Readonly<Record<string, string>> | undefined,
  options: BuildProviderOptions = {},
): Result<LimitedProvider> {
  const name = object.metadata?.name;
  if (!name) return fail([{ field: "metadata.name", message: "is required" }]);
  const share = options.share ?? 1;
  if (!(share > 0 && share <= 1)) {
    return fail([{ field: "share", message: `must be in (0, 1]; got ${share}` }]);
  }
  const parsed = parsePermissionProviderSpec(object.spec);
  if (!parsed.ok) return parsed;
  const spec = parsed.value;
  const built = baseProvider(name, spec, credentials, options);
  if (!built.ok) return fail(built.errors);
  const limiter = new ProviderLimiter({
    qps: spec.rateLimit.qps * share,
    burst: Math.max(1, Math.floor(spec.rateLimit.burst * share)),
    concurrency: Math.max(1, Math.floor(spec.concurrency * share)),
    clock: options.clock,
  });
  return ok({ ...limitProvider(built.value, limiter), type: spec.type, spec, limiter });
}
