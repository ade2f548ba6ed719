// The watcher's watches of Ingresses and TLS Secrets, for the checksum guard and the serving
// notices. Pepr's Watch bindings open one watch per binding through the fluent client, whose
// Watch keeps every object whole by uid and lists them all again every 10 minutes: the two Secret
// bindings held every Secret of the cluster (Helm releases, service account tokens) twice, whole,
// though only kubernetes.io/tls ones count. These are lean list-watches (kube/list-watch.ts),
// one per kind, the Secret one narrowed to TLS by a field selector; each object's events are
// handled in order (orderedFeed), as Pepr's queue did.
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import type { Ingress, Secret } from "../../core/ingress/types";
import type { ObjectHandler } from "../../kube/informer";
import { orderedHandling } from "../pepr/watches";
import { tlsSecretListWatch } from "./tls-secrets";
import { ingressListWatch } from "./watched-ingresses";

/** Starts both watches; handlers get each object with whether it was deleted. */
export function watchIngressesAndTlsSecrets(
  onIngress: ObjectHandler<Ingress>,
  onSecret: ObjectHandler<Secret>,
): void {
  // The same list-watches as admission's (watched-ingresses.ts, tls-secrets.ts), fed to other handlers.
  ingressListWatch(orderedHandling("ingresses (watcher)", onIngress), "(watcher)").start();
  const secrets = orderedHandling<Secret>(
    "secrets of type kubernetes.io/tls (watcher)",
    // Every Secret here is TLS (the field selector); one a relist found gone comes by name only.
    (secret, deleted) => onSecret({ type: TLS_SECRET_TYPE, ...secret }, deleted),
  );
  tlsSecretListWatch(secrets, "(watcher)").start();
}
