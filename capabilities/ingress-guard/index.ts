import { Capability, a } from "pepr";
import { serveModuleMetrics } from "../pepr/metrics";
import { loadGuardSettings } from "./settings";
import { validateIngress, validateTlsSecret } from "./admission";
import { IngressCheckSum, SecretCheckSum } from "../../kube/checksum-kinds";
import { ConsistencyGuard } from "./consistency";
import { ServingNotices } from "./serving-notices";
import { isWatcherProcess } from "../pepr/process";
import { failOpenValidation } from "../pepr/fail-open";
import { watchIngressesAndTlsSecrets } from "./watcher-watches";

export const IngressGuard = new Capability({
  name: "ingress-guard",
  description: "Validates Ingress and TLS Secrets and checks them against the published checksums.",
});

const { When } = IngressGuard;

When(a.Ingress).IsCreatedOrUpdated().Validate(validateIngress);
// Its webhook fails open (the gateway checks every pair again): so does an error in the review.
When(a.Secret).IsCreatedOrUpdated().Validate(failOpenValidation(validateTlsSecret));

const settings = loadGuardSettings();
const notices: ServingNotices = new ServingNotices(() => guard.state.scope);
const guard: ConsistencyGuard = new ConsistencyGuard({
  resyncMs: settings.resyncMs,
  graceMs: settings.graceMs,
  onListed: (ingresses, secrets): Promise<void> => notices.onList(ingresses, secrets),
});

When(a.IngressClass)
  .IsCreatedOrUpdated()
  .Watch(o => guard.onIngressClass(o, false));
When(a.IngressClass)
  .IsDeleted()
  .Watch(o => guard.onIngressClass(o, true));
When(IngressCheckSum)
  .IsCreatedOrUpdated()
  .Watch(o => guard.onChecksum("ingress", o, false));
When(IngressCheckSum)
  .IsDeleted()
  .Watch(o => guard.onChecksum("ingress", o, true));
When(SecretCheckSum)
  .IsCreatedOrUpdated()
  .Watch(o => guard.onChecksum("secret", o, false));
When(SecretCheckSum)
  .IsDeleted()
  .Watch(o => guard.onChecksum("secret", o, true));

// The watcher (or dev mode, which runs both halves) owns the reconciler; admission pods do not.
if (isWatcherProcess()) {
  // Ingresses and TLS Secrets: lean watches of Bulwark's, not Pepr bindings (watcher-watches.ts).
  watchIngressesAndTlsSecrets(
    async (ingress, deleted) => {
      guard.onObject("ingress", ingress, deleted);
      await notices.onIngress(ingress, deleted);
    },
    async (secret, deleted) => {
      guard.onObject("secret", secret, deleted);
      await notices.onSecret(secret, deleted);
    },
  );
  guard.start();
  if (settings.metricsPort !== 0) serveModuleMetrics(settings.metricsPort);
}
