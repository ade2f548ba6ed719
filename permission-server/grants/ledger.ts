// The grant ledger's store: PermissionGrant objects in the server's namespace, one per pod UID
// (core/permission/ledger.ts says what they hold). Every change is read → modify → write with the
// resourceVersion read (replace, or delete when nothing is left), retried on 409.
import type { CustomObjectsApi } from "@kubernetes/client-node";
import {
  PERMISSION_API_GROUP,
  PERMISSION_API_VERSION,
  permissionKinds,
} from "../../capabilities/pod-permission/permission-crds";
import { formatErrors } from "../../core/result";
import {
  ledgerIpLabel,
  ledgerLabels,
  parseLedgerSpec,
  type Ledger,
  type LedgerSpec,
} from "../../core/permission/ledger";
import { isConflict, isNotFound } from "../../kube/api-errors";

const MAX_TRIES = 20;
const KIND = permissionKinds.grant;
const API = { group: PERMISSION_API_GROUP, version: PERMISSION_API_VERSION, plural: KIND.plural };

interface GrantObject {
  metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: unknown;
}

/** A ledger object the server cannot read: someone else wrote it, it is never guessed at. */
export class LedgerError extends Error {}

function ledgerOf(object: GrantObject): Ledger {
  const parsed = parseLedgerSpec(object.spec);
  if (!parsed.ok) {
    throw new LedgerError(
      `${KIND.kind} ${object.metadata?.name ?? "?"}: ${formatErrors(parsed.errors)}`,
    );
  }
  return { spec: parsed.value, resourceVersion: object.metadata?.resourceVersion };
}

export class GrantLedger {
  constructor(
    private readonly custom: CustomObjectsApi,
    readonly namespace: string,
  ) {}

  /** The pod's ledger; undefined when nothing was ever recorded for it. */
  async read(uid: string): Promise<Ledger | undefined> {
    try {
      const object = (await this.custom.getNamespacedCustomObject({
        ...API,
        namespace: this.namespace,
        name: uid,
      })) as GrantObject;
      return ledgerOf(object);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every ledger holding something at `ip` (a fresh list, never a cache). */
  async atIp(ip: string): Promise<LedgerSpec[]> {
    return (await this.#list(ledgerIpLabel(ip))).map(l => l.spec);
  }

  /** Every ledger. */
  list(): Promise<Ledger[]> {
    return this.#list(undefined);
  }

  async #list(labelSelector: string | undefined): Promise<Ledger[]> {
    const answer = (await this.custom.listNamespacedCustomObject({
      ...API,
      namespace: this.namespace,
      ...(labelSelector ? { labelSelector } : {}),
    })) as { items?: GrantObject[] };
    return (answer.items ?? []).map(ledgerOf);
  }

  /**
   * Applies `change` to the pod's ledger (an empty one when there is none) and stores the result;
   * a ledger left with no entries is deleted. `change` may run several times, on fresh reads; it
   * must be pure.
   */
  async update(
    pod: LedgerSpec["pod"] & { group: string },
    change: (spec: LedgerSpec) => LedgerSpec,
  ): Promise<LedgerSpec> {
    for (let tries = 1; ; tries++) {
      const current = await this.read(pod.uid);
      const { group, ...identity } = pod;
      const next = change(current?.spec ?? { pod: identity, group, entries: [] });
      try {
        await this.#write(pod.uid, current, next);
        return next;
      } catch (error) {
        if (!isConflict(error) || tries >= MAX_TRIES) throw error;
        await new Promise(resolve => setTimeout(resolve, 20 + Math.random() * 80));
      }
    }
  }

  async #write(uid: string, current: Ledger | undefined, next: LedgerSpec): Promise<void> {
    if (next.entries.length === 0) {
      if (!current) return;
      await this.custom
        .deleteNamespacedCustomObject({
          ...API,
          namespace: this.namespace,
          name: uid,
          body: { preconditions: { resourceVersion: current.resourceVersion } },
        })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      return;
    }
    const body = {
      apiVersion: `${PERMISSION_API_GROUP}/${PERMISSION_API_VERSION}`,
      kind: KIND.kind,
      metadata: {
        name: uid,
        namespace: this.namespace,
        labels: ledgerLabels(next),
        ...(current ? { resourceVersion: current.resourceVersion } : {}),
      },
      spec: next,
    };
    if (current) {
      await this.custom.replaceNamespacedCustomObject({
        ...API,
        namespace: this.namespace,
        name: uid,
        body,
      });
    } else {
      await this.custom.createNamespacedCustomObject({ ...API, namespace: this.namespace, body });
    }
  }
}
