// The ProviderBuilder the server runs with: providers/registry.ts builds the client for the
// PermissionProvider's type with its limiter inside (every grant, poll and revoke waits its turn
// there, and the provider applies its own per-call timeout), so calls need no wrapping here.
import { formatErrors } from "../../core/result";
import { CatalogError, type ProviderBuilder } from "./catalog";
import { buildProvider as buildFromRegistry } from "./registry";

/** A builder for a server that is one of `replicas`: each takes its share of the rate limit. */
export function providerBuilder(replicas: number): ProviderBuilder {
  return ({ name, spec, credentials }) => {
    const built = buildFromRegistry({ metadata: { name }, spec }, credentials, {
      share: 1 / Math.max(1, replicas),
    });
    if (!built.ok)
      throw new CatalogError(`PermissionProvider ${name}: ${formatErrors(built.errors)}`);
    return { provider: built.value, schedule: call => call() };
  };
}
