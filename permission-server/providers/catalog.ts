// PermissionGroups, PermissionProviders and their credentials, read from the API server and
// briefly cached; one live Provider (with its limiter) per PermissionProvider, rebuilt when its
// spec or its Secret changes. The provider breaker belongs to the name, so a rebuild keeps it.
import {
  parsePermissionGroupSpec,
  providerInfo,
  parsePermissionProviderSpec,
  type PermissionProviderSpec,
  type ProviderInfo,
  type ResolvedPermissionGroup,
} from "../../core/permission";
import { formatErrors } from "../../core/result";
import type { ProviderHandle } from "../grants/job";
import { apiMessage, isNotFound } from "../../kube/api-errors";
import type { Kube } from "../kube";
import { JobSlots } from "../grants/job-slots";
import { ProviderBreaker } from "./breaker";
import type { Provider } from "./types";

const API = { group: "bulwark.dev", version: "v1alpha1" } as const;

/** Builds the backend client and its rate/concurrency limiter for one PermissionProvider. */
export type ProviderBuilder = (input: {
  name: string;
  spec: PermissionProviderSpec;
  credentials: Record<string, string> | undefined;
}) => { provider: Provider; schedule: ProviderHandle["schedule"] };

/** A lookup that cannot succeed by retrying soon (missing or invalid object). */
export class CatalogError extends Error {
  override name = "CatalogError";
}

export interface Catalog {
  group(namespace: string, name: string): Promise<ResolvedPermissionGroup>;
  provider(name: string): Promise<ProviderHandle>;
  /** The handle of a provider that exists, or undefined when it does not (revocation). */
  providerIfExists(name: string): Promise<ProviderHandle | undefined>;
  close(): Promise<void>;
}

interface Built {
  key: string;
  handle: ProviderHandle;
}

export interface KubeCatalogOptions {
  build: ProviderBuilder;
  breaker: { failures: number; openMs: number };
  /** This replica's share of each provider's rate limit (1 / replicas). */
  share: number;
  /** How long a read object is reused (ms). */
  ttlMs?: number;
}

export class KubeCatalog implements Catalog {
  readonly #built = new Map<string, Built>();
  readonly #breakers = new Map<string, ProviderBreaker>();
  readonly #slots = new Map<string, JobSlots>();
  readonly #cache = new Map<string, { until: number; value: Promise<unknown> }>();
  readonly #ttlMs: number;

  constructor(
    private readonly kube: Kube,
    private readonly options: KubeCatalogOptions,
  ) {
    this.#ttlMs = options.ttlMs ?? 3000;
  }

  /** Cached reads: concurrent askers share one request; failures are not kept. */
  #cached<T>(key: string, read: () => Promise<T>): Promise<T> {
    const hit = this.#cache.get(key);
    if (hit && hit.until > Date.now()) return hit.value as Promise<T>;
    const value = read();
    this.#cache.set(key, { until: Date.now() + this.#ttlMs, value });
    value.catch(() => this.#cache.delete(key));
    return value;
  }

  async #providerObject(name: string): Promise<{ spec: unknown } | undefined> {
    return this.#cached(`provider/${name}`, async () => {
      try {
        return (await this.kube.custom.getClusterCustomObject({
          ...API,
          plural: "permissionproviders",
          name,
        })) as { spec: unknown };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    });
  }

  async #providerSpec(name: string): Promise<PermissionProviderSpec | undefined> {
    const object = await this.#providerObject(name);
    if (!object) return undefined;
    const parsed = parsePermissionProviderSpec(object.spec);
    if (!parsed.ok) {
      throw new CatalogError(`PermissionProvider ${name}: ${formatErrors(parsed.errors)}`);
    }
    return parsed.value;
  }

  async group(namespace: string, name: string): Promise<ResolvedPermissionGroup> {
    const object = await this.#cached(`group/${namespace}/${name}`, async () => {
      try {
        return (await this.kube.custom.getNamespacedCustomObject({
          ...API,
          namespace,
          plural: "permissiongroups",
          name,
        })) as { spec?: { permissions?: { provider?: unknown }[] } };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    });
    if (!object) throw new CatalogError(`PermissionGroup ${namespace}/${name} does not exist`);
    const providers = new Map<string, ProviderInfo>();
    for (const permission of object.spec?.permissions ?? []) {
      if (typeof permission.provider !== "string") continue;
      const spec = await this.#providerSpec(permission.provider);
      if (spec) providers.set(permission.provider, providerInfo(spec));
    }
    // Checked again here: a provider's policy may have changed since the group was admitted.
    const resolved = parsePermissionGroupSpec(object.spec, providers, {
      name: namespace,
      labels: await this.#namespaceLabels(namespace),
    });
    if (!resolved.ok) {
      throw new CatalogError(
        `PermissionGroup ${namespace}/${name}: ${formatErrors(resolved.errors)}`,
      );
    }
    return resolved.value;
  }

  async #namespaceLabels(name: string): Promise<Record<string, string>> {
    const namespace = await this.#cached(`namespace/${name}`, () =>
      this.kube.core.readNamespace({ name }),
    );
    return namespace.metadata?.labels ?? {};
  }

  async #credentials(spec: PermissionProviderSpec): Promise<{
    data: Record<string, string> | undefined;
    version: string;
  }> {
    const ref = spec.credentialsSecretRef;
    if (!ref) return { data: undefined, version: "" };
    const secret = await this.#cached(`secret/${ref.namespace}/${ref.name}`, async () => {
      try {
        return await this.kube.core.readNamespacedSecret(ref);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw new Error(`reading Secret ${ref.namespace}/${ref.name}: ${apiMessage(error)}`);
      }
    });
    if (!secret) throw new CatalogError(`Secret ${ref.namespace}/${ref.name} does not exist`);
    const data: Record<string, string> = {};
    for (const [key, value] of Object.entries(secret.data ?? {})) {
      data[key] = Buffer.from(value, "base64").toString("utf8");
    }
    for (const [key, value] of Object.entries(secret.stringData ?? {})) data[key] = value;
    return { data, version: secret.metadata?.resourceVersion ?? "" };
  }

  /** Every provider breaker this replica has, by provider name (metrics). */
  breakers(): IterableIterator<[string, ProviderBreaker]> {
    return this.#breakers.entries();
  }

  breaker(name: string): ProviderBreaker {
    let breaker = this.#breakers.get(name);
    if (!breaker) {
      breaker = new ProviderBreaker(this.options.breaker);
      this.#breakers.set(name, breaker);
    }
    return breaker;
  }

  /** About two seconds' worth of the provider's calls (at least its concurrency); kept per name. */
  #jobSlots(name: string, spec: PermissionProviderSpec): JobSlots {
    const size = Math.max(spec.concurrency, Math.ceil(spec.rateLimit.qps * this.options.share * 2));
    let slots = this.#slots.get(name);
    if (!slots || slots.size !== size) {
      slots = new JobSlots(size);
      this.#slots.set(name, slots);
    }
    return slots;
  }

  async providerIfExists(name: string): Promise<ProviderHandle | undefined> {
    const spec = await this.#providerSpec(name);
    if (!spec) return undefined;
    const credentials = await this.#credentials(spec);
    const key = `${JSON.stringify(spec)}@${credentials.version}`;
    const built = this.#built.get(name);
    if (built?.key === key) return built.handle;
    const { provider, schedule } = this.options.build({
      name,
      spec,
      credentials: credentials.data,
    });
    const handle: ProviderHandle = {
      name,
      provider,
      breaker: this.breaker(name),
      slots: this.#jobSlots(name, spec),
      timeoutMs: spec.timeoutSeconds * 1000,
      schedule,
    };
    this.#built.set(name, { key, handle });
    // Calls in flight on the old client finish within their timeout; close it after that.
    if (built)
      setTimeout(() => void built.handle.provider.close(), built.handle.timeoutMs * 2).unref();
    return handle;
  }

  async provider(name: string): Promise<ProviderHandle> {
    const handle = await this.providerIfExists(name);
    if (!handle) throw new CatalogError(`PermissionProvider ${name} does not exist`);
    return handle;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#built.values()].map(b => b.handle.provider.close()));
    this.#built.clear();
  }
}
