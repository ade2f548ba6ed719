// Admission glue: read what the decision needs from the cluster, decide in core/, answer.
import { Log, type a, type PeprValidateRequest } from "pepr";
import { isOurIngress, namesNoClass } from "../../core/ingress/class";
import {
  refusedReferrer,
  selectsIngress,
  TLS_SECRET_TYPE,
  type ServingScope,
} from "../../core/ingress/selection";
import { reviewIngress } from "../../core/ingress/review-ingress";
import {
  hostsOf,
  PathVerdicts,
  reviewRegexHosts,
  type RegexHostReview,
} from "../../core/ingress/regex-hosts";
import { isCanaryIngress } from "../../core/annotations";
import { namespacedName } from "../../core/object-key";
import { watchedIngresses } from "./watched-ingresses";
import { reviewTlsSecret } from "../../core/ingress/review-secret";
import type { Ingress, Secret } from "../../core/ingress/types";
import { NGINX_ANNOTATION_PREFIX } from "../../core/names";
import { formatErrors, type FieldError } from "../../core/result";
import {
  admissionPairs,
  classIsDefaultNow,
  ingressesUsingSecret,
  secretNamesOf,
  tlsSecretLookup,
  type Freshness,
} from "./cluster-reads";
import { securityAnnotationMode, settingsScope } from "./scope";

/** An Ingress of Bulwark's class dropped for its referrer is admitted, and told why it is not served. */
function referrerWarnings(ingress: Ingress, scope: ServingScope): string[] | undefined {
  const referrer = refusedReferrer(ingress, scope);
  if (!isOurIngress(ingress) || referrer === undefined) return undefined;
  return [
    `${NGINX_ANNOTATION_PREFIX}ingress-referrer ${JSON.stringify(referrer)} is not in the gateway's allow-list (BULWARK_INGRESS_REFERRERS): this Ingress is not served`,
  ];
}

type ValidateActionResponse = ReturnType<PeprValidateRequest<a.Ingress>["Approve"]>;

function answer(
  req: PeprValidateRequest<a.Ingress> | PeprValidateRequest<a.Secret>,
  what: string,
  errors: FieldError[],
  warnings: string[],
): ValidateActionResponse {
  const ns = req.Request.namespace;
  const name = req.Raw.metadata?.name;
  if (errors.length === 0) return req.Approve(warnings.length > 0 ? warnings : undefined);
  Log.info({ ns, name, kind: what, reason: formatErrors(errors) }, "denied");
  return req.Deny(
    `${what} ${ns}/${name} rejected by Bulwark: ${formatErrors(errors)}`,
    422,
    warnings,
  );
}

/**
 * A review on the API server's cached copies of the Secrets it reads, and, when that finds
 * errors, again on the latest: nothing is refused on a copy a moment old. An approval may rest
 * on one; the gateway checks every pair again before it serves it.
 */
export async function refusedOnlyOnLatest<Review extends { errors: FieldError[] }>(
  review: (freshness: Freshness) => Promise<Review>,
): Promise<Review> {
  const cached = await review("cached");
  return cached.errors.length === 0 ? cached : review("latest");
}

export async function validateIngress(
  req: PeprValidateRequest<a.Ingress>,
): Promise<ValidateActionResponse> {
  const ingress: Ingress = req.Raw;
  // The class is read only for an Ingress naming none: the rest decide without a request.
  const scope = {
    ...settingsScope(),
    classIsDefault: namesNoClass(ingress) && (await classIsDefaultNow()),
  };
  if (!selectsIngress(ingress, scope)) return req.Approve(referrerWarnings(ingress, scope));
  const namespace = req.Request.namespace ?? ingress.metadata?.namespace ?? "default";
  const review = await refusedOnlyOnLatest(async freshness =>
    reviewIngress(
      ingress,
      await tlsSecretLookup(
        namespace,
        secretNamesOf([ingress]),
        new Date(),
        admissionPairs(freshness),
      ),
      securityAnnotationMode(),
    ),
  );
  // The API server sends oldObject null on a CREATE.
  const previous = (req.OldResource ?? undefined) as Ingress | undefined;
  const hosts = await regexHostReview(ingress, namespace, previous, scope);
  return answer(
    req,
    "Ingress",
    [...review.errors, ...hosts.errors],
    [...review.warnings, ...hosts.warnings],
  );
}

/** Remembered across reviews: a host's paths are compiled once, not at every write to it. */
const pathVerdicts = new PathVerdicts();

/**
 * What this write breaks on its hosts that some Ingress makes regex (core/ingress/regex-hosts.ts),
 * against the other Ingresses Bulwark serves there; nothing until the watch has listed them.
 */
async function regexHostReview(
  ingress: Ingress,
  namespace: string,
  previous: Ingress | undefined,
  scope: ServingScope,
): Promise<RegexHostReview> {
  const own = namespacedName(namespace, ingress.metadata?.name ?? "");
  const candidates = new Map<string, Ingress[]>();
  for (const host of hostsOf(ingress)) {
    const on = watchedIngresses.onHost(host, own);
    if (on === undefined) return { errors: [], warnings: [] };
    candidates.set(
      host,
      on.filter(other => !isCanaryIngress(other.metadata?.annotations)),
    );
  }
  const classless =
    (previous !== undefined && namesNoClass(previous)) ||
    [...candidates.values()].some(list => list.some(namesNoClass));
  const serving =
    classless && !scope.classIsDefault
      ? { ...scope, classIsDefault: await classIsDefaultNow() }
      : scope;
  const neighbours = (host: string) =>
    (candidates.get(host) ?? []).filter(other => selectsIngress(other, serving));
  // A previous version Bulwark did not serve (another class) put no path on its hosts.
  const served = previous !== undefined && selectsIngress(previous, serving) ? previous : undefined;
  return reviewRegexHosts(ingress, served, neighbours, pathVerdicts);
}

/** TLS Secrets are Bulwark's business only while one of its Ingresses names them. */
export async function validateTlsSecret(
  req: PeprValidateRequest<a.Secret>,
): Promise<ValidateActionResponse> {
  const secret: Secret = req.Raw;
  if (secret.type !== TLS_SECRET_TYPE || !secret.metadata?.name) return req.Approve();
  const namespace = req.Request.namespace ?? secret.metadata.namespace ?? "default";
  // Most Secrets are named by no Ingress of Bulwark's: those cost no read of the class.
  const users = await ingressesUsingSecret(namespace, secret.metadata.name, async classless => ({
    ...settingsScope(),
    classIsDefault: classless && (await classIsDefaultNow()),
  }));
  if (users.length === 0) return req.Approve();
  const otherNames = secretNamesOf(users).filter(n => n !== secret.metadata?.name);
  // Pepr hands validate callbacks a Secret with data already base64-decoded.
  const data = {
    name: secret.metadata.name,
    certPem: secret.data?.["tls.crt"] ?? "",
    keyPem: secret.data?.["tls.key"] ?? "",
  };
  const review = await refusedOnlyOnLatest(async freshness =>
    reviewTlsSecret(
      data,
      new Date(),
      users,
      await tlsSecretLookup(namespace, otherNames, new Date(), admissionPairs(freshness)),
    ),
  );
  return answer(req, "Secret", review.errors, review.warnings);
}
