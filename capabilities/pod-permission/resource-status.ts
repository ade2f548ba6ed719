// Ready conditions on PermissionGroup and PermissionProvider (watcher side). A group is Ready when
// its spec is valid and every provider it names exists and is valid; groups are re-judged when a
// provider changes, so the whole (small) set is synced together, debounced, and resynced.
import type { V1Namespace } from "@kubernetes/client-node";
import { Log } from "pepr";
import { setCondition, type ConditionChange } from "../../core/conditions";
import {
  parsePermissionProviderSpec,
  providerInfo,
  validatePermissionGroup,
  validatePermissionProvider,
  type ProviderInfo,
} from "../../core/permission";
import { formatErrors, type FieldError } from "../../core/result";
import { NAMESPACES, resourcePath, type ApiResource } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import {
  PERMISSION_GROUPS,
  PERMISSION_PROVIDERS,
  READY_CONDITION,
  type PermissionResourceStatus,
} from "./permission-crds";
import type { PermissionGroup, PermissionProvider } from "./permission-kinds";

export function readyCondition(
  errors: FieldError[],
  generation: number | undefined,
): ConditionChange {
  return errors.length === 0
    ? {
        type: READY_CONDITION,
        status: "True",
        reason: "Valid",
        message: "spec is valid",
        observedGeneration: generation,
      }
    : {
        type: READY_CONDITION,
        status: "False",
        reason: "InvalidSpec",
        message: formatErrors(errors),
        observedGeneration: generation,
      };
}

type Resource = (PermissionGroup | PermissionProvider) & { status?: PermissionResourceStatus };

export class PermissionStatusWriter {
  #timer: NodeJS.Timeout | undefined;
  readonly #resyncMs: number;

  constructor(resyncMs: number) {
    this.#resyncMs = resyncMs;
  }

  start(): void {
    this.changed();
    setInterval(() => this.changed(), this.#resyncMs).unref();
  }

  /** Something changed: sync everything a moment later (bursts cost one pass). */
  changed(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#sync(), 300);
  }

  async #sync(): Promise<void> {
    try {
      const api = keptAliveApi();
      const providers = await api.list<Resource>(resourcePath(PERMISSION_PROVIDERS));
      const known = new Map<string, ProviderInfo>();
      for (const provider of providers) {
        const spec = parsePermissionProviderSpec(provider.spec);
        if (spec.ok && provider.metadata?.name)
          known.set(provider.metadata.name, providerInfo(spec.value));
        await this.#write(
          PERMISSION_PROVIDERS,
          provider,
          validatePermissionProvider(provider.spec),
        );
      }
      const namespaces = await api.list<V1Namespace>(resourcePath(NAMESPACES));
      const labels = new Map(namespaces.map(n => [n.metadata?.name, n.metadata?.labels]));
      for (const group of await api.list<Resource>(resourcePath(PERMISSION_GROUPS))) {
        const name = group.metadata?.namespace ?? "";
        const namespace = { name, labels: labels.get(name) ?? {} };
        await this.#write(
          PERMISSION_GROUPS,
          group,
          validatePermissionGroup(group.spec, known, namespace),
        );
      }
    } catch (error) {
      Log.warn({ err: String(error) }, "permission status sync failed; retrying");
      setTimeout(() => this.changed(), 5000).unref();
    }
  }

  async #write(kind: ApiResource, resource: Resource, errors: FieldError[]): Promise<void> {
    const generation = resource.metadata?.generation;
    const previous = resource.status;
    const status: PermissionResourceStatus = {
      observedGeneration: generation,
      conditions: setCondition(
        previous?.conditions,
        readyCondition(errors, generation),
        new Date(),
      ),
    };
    if (JSON.stringify(status) === JSON.stringify(previous ?? {})) return;
    const { name = "", namespace } = resource.metadata ?? {};
    await keptAliveApi().mergePatch(`${resourcePath(kind, { namespace, name })}/status`, {
      status,
    });
  }
}
