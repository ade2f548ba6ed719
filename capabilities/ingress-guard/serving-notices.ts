// Events on Ingresses the gateway refuses to serve. The gateway stays read-only, so the watcher
// runs the same pure review (core/ingress/review-ingress.ts servingRefusal) on every Ingress of
// Bulwark's and says so on the object when its verdict changes: Ingresses from namespaces or times
// the webhook never saw, or admitted while it failed open, are refused, never served weakened.
import { Log } from "pepr";
import { objectKey } from "../../core/checksum";
import { isCanaryIngress } from "../../core/annotations";
import { selectsIngress, type ServingScope } from "../../core/ingress/selection";
import { servingRefusal } from "../../core/ingress/review-ingress";
import type { Ingress } from "../../core/ingress/types";
import { recordEvent } from "../pepr/events";
import { secretNamesOf, tlsSecretLookup } from "./cluster-reads";
import { guardMetrics } from "./metrics";

const COMPONENT = "ingress-guard";
const SERVABLE = "";

export class ServingNotices {
  /** namespace/name → the last verdict announced ("" servable) and the object it was made on. */
  readonly #last = new Map<string, { verdict: string; ingress: Ingress }>();

  constructor(private readonly scope: () => ServingScope) {}

  async onIngress(ingress: Ingress, deleted: boolean): Promise<void> {
    const key = objectKey(ingress);
    if (deleted || !selectsIngress(ingress, this.scope())) {
      this.#last.delete(key);
      this.#updateGauge();
      return;
    }
    const namespace = ingress.metadata?.namespace ?? "";
    // No date: a certificate that expired after admission still serves (availability).
    const secrets = await tlsSecretLookup(namespace, secretNamesOf([ingress]), undefined);
    const verdict = servingRefusal(ingress, secrets) ?? SERVABLE;
    const before = this.#last.get(key)?.verdict;
    this.#last.set(key, { verdict, ingress });
    this.#updateGauge();
    if (before === verdict || (before === undefined && verdict === SERVABLE)) return;
    await this.#announce(ingress, verdict);
  }

  /** A TLS Secret changed: the Ingresses that name it are judged again. */
  async onSecret(namespace: string, name: string): Promise<void> {
    const users = [...this.#last.values()]
      .map(entry => entry.ingress)
      .filter(
        ingress =>
          ingress.metadata?.namespace === namespace &&
          (ingress.spec?.tls ?? []).some(tls => tls.secretName === name),
      );
    for (const ingress of users) await this.onIngress(ingress, false);
  }

  /** A full list (resync, or a change of scope): every Ingress judged, the vanished forgotten. */
  async onList(ingresses: readonly Ingress[]): Promise<void> {
    const listed = new Set(ingresses.map(objectKey));
    for (const key of [...this.#last.keys()]) if (!listed.has(key)) this.#last.delete(key);
    for (const ingress of ingresses) await this.onIngress(ingress, false);
  }

  #updateGauge(): void {
    let refused = 0;
    for (const { verdict } of this.#last.values()) if (verdict !== SERVABLE) refused++;
    guardMetrics.refusedIngresses.set(refused);
  }

  async #announce(ingress: Ingress, verdict: string): Promise<void> {
    const involved = { ...ingress, apiVersion: "networking.k8s.io/v1", kind: "Ingress" };
    const log = { ns: ingress.metadata?.namespace, name: ingress.metadata?.name };
    if (verdict === SERVABLE) {
      Log.info(log, "ingress servable again");
      const message = "The gateway serves this Ingress again: it passes Bulwark's review.";
      await recordEvent(involved, { type: "Normal", reason: "Served", message }, COMPONENT);
      return;
    }
    const effect = isCanaryIngress(ingress.metadata?.annotations)
      ? "this canary is not served (its main Ingress keeps all the traffic)"
      : "its routes answer 503 until it is fixed";
    Log.warn({ ...log, reason: verdict }, "ingress refused by the gateway");
    await recordEvent(
      involved,
      {
        type: "Warning",
        reason: "NotServed",
        message: `Refused by the gateway: ${effect}. ${verdict}`,
      },
      COMPONENT,
    );
  }
}
