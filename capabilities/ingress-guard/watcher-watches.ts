// The watcher's watches of Ingresses and TLS Secrets, for the checksum guard and the serving
// notices. Pepr's Watch bindings open one watch per binding through the fluent client, whose
// Watch keeps every object whole by uid and lists them all again every 10 minutes: the two Secret
// bindings held every Secret of the cluster (Helm releases, service account tokens) twice, whole,
// though only kubernetes.io/tls ones count. These are lean list-watches (kube/lean-list-watch.ts),
// one per kind, the Secret one narrowed to TLS by a field selector; each object's events are
// handled in order (orderedFeed), as Pepr's queue did.
import { Log } from "pepr";
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import type { Ingress, Secret } from "../../core/ingress/types";
import { orderedFeed, startFeeding, type ObjectHandler } from "../../kube/informer";
import type { LeanListWatch, Listed } from "../../kube/lean-list-watch";
import { tlsSecretInformer } from "./tls-secrets";
import { ingressInformer } from "./tls-users";

function watchInOrder<T extends Listed>(
  what: string,
  informer: LeanListWatch<T>,
  handle: ObjectHandler<T>,
): void {
  const feed = orderedFeed<T>(handle, (error, object) =>
    Log.warn(
      { ns: object.metadata?.namespace, name: object.metadata?.name, err: String(error) },
      `${what}: handling an event failed; the resync repairs what it left`,
    ),
  );
  startFeeding(informer, feed, { what, warn: (message, fields) => Log.warn(fields, message) });
}

/** Starts both watches; handlers get each object with whether it was deleted. */
export function watchIngressesAndTlsSecrets(
  onIngress: ObjectHandler<Ingress>,
  onSecret: ObjectHandler<Secret>,
): void {
  // The same list-watches as admission's (tls-users.ts, tls-secrets.ts), fed to other handlers.
  watchInOrder("ingresses (watcher)", ingressInformer() as LeanListWatch<Ingress>, onIngress);
  watchInOrder(
    "secrets of type kubernetes.io/tls (watcher)",
    tlsSecretInformer() as LeanListWatch<Secret>,
    // Every Secret here is TLS (the field selector); one a relist found gone comes by name only.
    (secret, deleted) => onSecret({ type: TLS_SECRET_TYPE, ...secret }, deleted),
  );
}
