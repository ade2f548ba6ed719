// The gateway's own review of what it serves: the admission review (core/ingress/review-ingress.ts)
// run again on every Ingress it is about to serve, against the TLS Secrets it has cached, so that an
// Ingress the webhook never saw (skipped namespace, created before it, admitted while it failed
// open) is refused rather than served in a weakened form. Pure, and cached per object: an
// unchanged Ingress whose Secrets are unchanged costs one WeakMap lookup.
import type { V1Ingress, V1Secret } from "@kubernetes/client-node";
import type { Ingress } from "../../core/ingress/types";
import { servingRefusal } from "../../core/ingress/review-ingress";
import type { SecretLookup } from "../../core/ingress/validate-tls";
import type { Result } from "../../core/result";
import { inspectTlsPair, type CertificateFacts } from "../../core/tls/certificate";

interface CachedVerdict {
  secrets: (V1Secret | undefined)[];
  refusal: string | undefined;
}

function decoded(secret: V1Secret, key: string): string {
  const value = secret.data?.[key];
  return value === undefined ? "" : Buffer.from(value, "base64").toString("utf8");
}

export class ServingVerdicts {
  readonly #verdicts = new WeakMap<V1Ingress, CachedVerdict>();
  readonly #facts = new WeakMap<V1Secret, Result<CertificateFacts>>();

  /** Why the Ingress must not be served, or undefined; `secrets` is the cache by namespace/name. */
  refusal(ingress: V1Ingress, secrets: ReadonlyMap<string, V1Secret>): string | undefined {
    const namespace = ingress.metadata?.namespace ?? "";
    const names = (ingress.spec?.tls ?? []).flatMap(tls =>
      tls.secretName ? [tls.secretName] : [],
    );
    const named = names.map(name => secrets.get(`${namespace}/${name}`));
    const cached = this.#verdicts.get(ingress);
    if (cached && cached.secrets.every((secret, i) => secret === named[i])) return cached.refusal;
    const byName = new Map(names.map((name, i) => [name, named[i]]));
    const lookup: SecretLookup = name => {
      const secret = byName.get(name);
      return secret === undefined ? undefined : this.#factsOf(secret);
    };
    const refusal = servingRefusal(ingress as Ingress, lookup);
    this.#verdicts.set(ingress, { secrets: named, refusal });
    return refusal;
  }

  /** No date: a certificate that expired after admission still serves (availability). */
  #factsOf(secret: V1Secret): Result<CertificateFacts> {
    let facts = this.#facts.get(secret);
    if (facts === undefined) {
      facts = inspectTlsPair(decoded(secret, "tls.crt"), decoded(secret, "tls.key"), undefined);
      this.#facts.set(secret, facts);
    }
    return facts;
  }
}
