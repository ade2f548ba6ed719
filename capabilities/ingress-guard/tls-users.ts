// Which Ingresses name a TLS Secret, kept from a watch (watched-ingresses.ts in the admission
// process, the serving notices in the watcher). A TLS Secret's admission used to list every
// Ingress of its namespace on each write: with 10k Ingresses in one namespace that was megabytes
// of JSON per cert-manager renewal.
import type { Ingress } from "../../core/ingress/types";
import { namespacedName, objectKey } from "../../core/object-key";

/** The Secret names an Ingress's tls entries give. */
export function secretsNamedBy(ingress: Ingress): string[] {
  return (ingress.spec?.tls ?? []).flatMap(tls => (tls.secretName ? [tls.secretName] : []));
}

/** Ingresses by the (namespace, Secret) they name; pure, fed by the watch. */
export class TlsUsersIndex {
  readonly #ingresses = new Map<string, Ingress>();
  readonly #bySecret = new Map<string, Set<string>>();

  put(ingress: Ingress): void {
    this.remove(ingress);
    const namespace = ingress.metadata?.namespace ?? "";
    const secrets = secretsNamedBy(ingress);
    if (secrets.length === 0) return;
    const own = objectKey(ingress);
    // What the selection, the review and an Event on it read: no managedFields, status or labels.
    const { name, uid, annotations } = ingress.metadata ?? {};
    this.#ingresses.set(own, {
      metadata: { name, namespace, uid, annotations },
      spec: ingress.spec,
    });
    for (const secret of secrets) {
      const users = this.#bySecret.get(namespacedName(namespace, secret)) ?? new Set<string>();
      users.add(own);
      this.#bySecret.set(namespacedName(namespace, secret), users);
    }
  }

  remove(ingress: Ingress): void {
    const namespace = ingress.metadata?.namespace ?? "";
    const own = objectKey(ingress);
    const previous = this.#ingresses.get(own);
    if (previous === undefined) return;
    this.#ingresses.delete(own);
    for (const secret of secretsNamedBy(previous)) {
      const users = this.#bySecret.get(namespacedName(namespace, secret));
      users?.delete(own);
      if (users?.size === 0) this.#bySecret.delete(namespacedName(namespace, secret));
    }
  }

  /** The Ingresses of `namespace` naming `secretName`, in no particular order. */
  users(namespace: string, secretName: string): Ingress[] {
    const keys = this.#bySecret.get(namespacedName(namespace, secretName)) ?? [];
    return [...keys].flatMap(k => this.#ingresses.get(k) ?? []);
  }
}
