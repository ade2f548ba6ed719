// Events on Ingresses the gateway refuses to serve. The gateway stays read-only, so the watcher
// runs the same pure review (core/ingress/review-ingress.ts servingRefusal) on every Ingress of
// Bulwark's and says so on the object when its verdict changes: Ingresses from namespaces or times
// the webhook never saw, or admitted while it failed open, are refused, never served weakened.
import { Log } from "pepr";
import { objectKey } from "../../core/object-key";
import { isCanaryIngress } from "../../core/annotations";
import { selectsIngress, TLS_SECRET_TYPE, type ServingScope } from "../../core/ingress/selection";
import { servingRefusal } from "../../core/ingress/review-ingress";
import type { Ingress, Secret } from "../../core/ingress/types";
import { recordEvent } from "../pepr/events";
import { secretNamesOf, tlsSecretLookup, type PairSource } from "./cluster-reads";
import { TlsPairIndex } from "./tls-secrets";
import { TlsUsersIndex } from "./tls-users";
import { guardMetrics } from "./metrics";

const COMPONENT = "ingress-guard";
const SERVABLE = "";

/** Enough of an Ingress to find it again by name. */
type ObjectName = Pick<Ingress, "metadata">;

export class ServingNotices {
  /** namespace/name → the last verdict ("" servable) of each Ingress of Bulwark's. */
  readonly #verdicts = new Map<string, { verdict: string; ingress: ObjectName }>();
  /**
   * The Ingresses naming TLS Secrets, kept slim: a Secret's event finds its users without a scan
   * of every Ingress (it was one per event, 10 000 for 10 000 Ingresses).
   */
  readonly #tlsUsers = new TlsUsersIndex();
  /** How many verdicts refuse: the gauge, kept without a scan per event. */
  #refused = 0;
  /**
   * The TLS Secrets' pairs from the watcher's watch and resync: a resync judged every Ingress on a
   * GET of its Secrets, 10 000 reads every period for 10 000 Ingresses. One it does not hold
   * (an Ingress seen before its Secret) is read; one a moment behind is judged again when its
   * Secret's event arrives (onSecret).
   */
  readonly #pairs = new TlsPairIndex();
  readonly #source: PairSource = {
    held: (namespace, name) => this.#pairs.get(namespace, name),
    read: "latest",
  };

  constructor(private readonly scope: () => ServingScope) {}

  async onIngress(ingress: Ingress, deleted: boolean): Promise<void> {
    const key = objectKey(ingress);
    if (deleted || !selectsIngress(ingress, this.scope())) {
      this.#forget(key, ingress);
      return;
    }
    const namespace = ingress.metadata?.namespace ?? "";
    // No date: a certificate that expired after admission still serves (availability).
    const names = secretNamesOf([ingress]);
    const secrets = await tlsSecretLookup(namespace, names, undefined, this.#source);
    const verdict = servingRefusal(ingress, secrets) ?? SERVABLE;
    const before = this.#verdicts.get(key)?.verdict;
    this.#forget(key, ingress);
    this.#tlsUsers.put(ingress);
    this.#verdicts.set(key, {
      verdict,
      ingress: { metadata: { namespace, name: ingress.metadata?.name } },
    });
    if (verdict !== SERVABLE) this.#refused++;
    guardMetrics.refusedIngresses.set(this.#refused);
    if (before === verdict || (before === undefined && verdict === SERVABLE)) return;
    await this.#announce(ingress, verdict);
  }

  /** A TLS Secret changed: the Ingresses that name it are judged again. */
  async onSecret(secret: Secret, deleted: boolean): Promise<void> {
    if (secret.type !== TLS_SECRET_TYPE) return;
    if (deleted) this.#pairs.remove(secret);
    else this.#pairs.put(secret);
    const { namespace = "", name = "" } = secret.metadata ?? {};
    for (const ingress of this.#tlsUsers.users(namespace, name))
      await this.onIngress(ingress, false);
  }

  /** A full list (resync, or a change of scope): every Ingress judged, the vanished forgotten. */
  async onList(ingresses: readonly Ingress[], secrets: readonly Secret[]): Promise<void> {
    this.#pairs.replaceAll(secrets);
    const listed = new Set(ingresses.map(objectKey));
    for (const [key, { ingress }] of [...this.#verdicts]) {
      if (!listed.has(key)) this.#forget(key, ingress);
    }
    for (const ingress of ingresses) await this.onIngress(ingress, false);
  }

  #forget(key: string, ingress: ObjectName): void {
    this.#tlsUsers.remove(ingress);
    const previous = this.#verdicts.get(key);
    if (previous === undefined) return;
    this.#verdicts.delete(key);
    if (previous.verdict !== SERVABLE) this.#refused--;
    guardMetrics.refusedIngresses.set(this.#refused);
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
