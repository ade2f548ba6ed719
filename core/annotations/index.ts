// The public surface of core/annotations: one parse per kind of object, running every family and
// returning all errors at once, plus each family for callers that need just one.
import { fail, ok, type FieldError, type Result } from "../result";
import { parseCanary, type CanaryConfig } from "./canary";
import { parseCors, type CorsConfig } from "./cors";
import { parseProxy, type ProxyConfig } from "./proxy";
import { parseRedirect, type RedirectConfig } from "./redirect";
import { ignoredAnnotationWarnings } from "./catalog";
import { parseRewrite, type RewriteConfig } from "./rewrite";
import { parseRobots, type RobotsConfig } from "./robots";
import { parseIngressRollout, parseSecretRollout, type RolloutConfig } from "./rollout";
import { parseVersion } from "./version";
import { parseReferrers, type ReferrerConfig } from "./referrer";
import { parseSourceRange, type SourceRangeConfig } from "./source-range";
import { parseRateLimit, type RateLimitConfig } from "./rate-limit";
import { parseUpstream, type UpstreamConfig } from "./upstream";
import { parseUrlRedirect, type UrlRedirectConfig } from "./url-redirect";
import { parseHostNames, type HostNamesConfig } from "./host-names";
import { parseErrorPages, type ErrorPagesConfig } from "./error-pages";
import { parseBuffering, type BufferingConfig } from "./buffering";
import { parseLoadBalancing, type LoadBalancingConfig } from "./load-balancing";
import { affinityErrors, affinityWarnings, parseAffinity, type AffinityConfig } from "./affinity";
import { parseBasicAuth, type BasicAuthConfig } from "./basic-auth";
import { parseExternalAuth, type ExternalAuthConfig } from "./external-auth";
import { parseHttp2, type Http2Config } from "./http2";

/** An Ingress's annotations, one entry per family; undefined when none of its keys is set. */
export interface IngressAnnotations {
  canary: CanaryConfig | undefined;
  cors: CorsConfig | undefined;
  robots: RobotsConfig | undefined;
  redirect: RedirectConfig | undefined;
  proxy: ProxyConfig | undefined;
  rewrite: RewriteConfig | undefined;
  rollout: RolloutConfig | undefined;
  version: number | undefined;
  referrer: ReferrerConfig | undefined;
  sourceRange: SourceRangeConfig | undefined;
  /** limit-rps, limit-rpm, limit-connections, limit-burst-multiplier, limit-allowlist. */
  rateLimit: RateLimitConfig | undefined;
  /** backend-protocol, proxy-ssl-*, upstream-vhost, x-forwarded-prefix. */
  upstream: UpstreamConfig | undefined;
  urlRedirect: UrlRedirectConfig | undefined;
  hostNames: HostNamesConfig | undefined;
  errorPages: ErrorPagesConfig | undefined;
  buffering: BufferingConfig | undefined;
  /** load-balance, upstream-hash-by (+subset, subset-size). */
  balancing: LoadBalancingConfig | undefined;
  /** affinity (cookie), affinity-mode, affinity-canary-behavior, session-cookie-*. */
  affinity: AffinityConfig | undefined;
  /** auth-type: basic, auth-secret, auth-secret-type, auth-realm. */
  basicAuth: BasicAuthConfig | undefined;
  /** auth-url and the rest of the external-auth family. */
  externalAuth: ExternalAuthConfig | undefined;
  /** bulwark.dev/http2; optional so configs built before it stay valid. */
  http2?: Http2Config | undefined;
}

/** A Secret's annotations: its batched rollout and its checksum version. */
export interface SecretAnnotations {
  rollout: RolloutConfig | undefined;
  version: number | undefined;
}

type Annotations = Readonly<Record<string, string>> | undefined;

/** Gathers every family's errors and warnings, so one denial lists them all. */
class Gathered {
  readonly errors: FieldError[] = [];
  readonly warnings: string[] = [];

  take<T>(result: Result<T>): T | undefined {
    this.warnings.push(...result.warnings);
    if (result.ok) return result.value;
    this.errors.push(...result.errors);
    return undefined;
  }

  result<T>(value: T): Result<T> {
    return this.errors.length > 0 ? fail(this.errors, this.warnings) : ok(value, this.warnings);
  }
}

export function parseIngressAnnotations(annotations: Annotations): Result<IngressAnnotations> {
  const all = new Gathered();
  const value: IngressAnnotations = {
    canary: all.take(parseCanary(annotations)),
    cors: all.take(parseCors(annotations)),
    robots: all.take(parseRobots(annotations)),
    redirect: all.take(parseRedirect(annotations)),
    proxy: all.take(parseProxy(annotations)),
    rewrite: all.take(parseRewrite(annotations)),
    rollout: all.take(parseIngressRollout(annotations)),
    version: all.take(parseVersion(annotations)),
    referrer: all.take(parseReferrers(annotations)),
    sourceRange: all.take(parseSourceRange(annotations)),
    rateLimit: all.take(parseRateLimit(annotations)),
    upstream: all.take(parseUpstream(annotations)),
    urlRedirect: all.take(parseUrlRedirect(annotations)),
    hostNames: all.take(parseHostNames(annotations)),
    errorPages: all.take(parseErrorPages(annotations)),
    buffering: all.take(parseBuffering(annotations)),
    balancing: all.take(parseLoadBalancing(annotations)),
    affinity: all.take(parseAffinity(annotations)),
    basicAuth: all.take(parseBasicAuth(annotations)),
    externalAuth: all.take(parseExternalAuth(annotations)),
    http2: all.take(parseHttp2(annotations)),
  };
  all.errors.push(...affinityErrors(value.affinity, value.rewrite?.regexPaths === true));
  all.warnings.push(...affinityWarnings(value.affinity, annotations));
  all.warnings.push(...ignoredAnnotationWarnings(annotations, "Ingress"));
  return all.result(value);
}

export function parseSecretAnnotations(annotations: Annotations): Result<SecretAnnotations> {
  const all = new Gathered();
  const value: SecretAnnotations = {
    rollout: all.take(parseSecretRollout(annotations)),
    version: all.take(parseVersion(annotations)),
  };
  all.warnings.push(...ignoredAnnotationWarnings(annotations, "Secret"));
  return all.result(value);
}

export { annotationPath } from "./family";
export type { AnnotationField, Family, FamilyName } from "./family";
export {
  ANNOTATION_REGISTRY,
  lookupAnnotation,
  type AnnotatedKind,
  type AnnotationInfo,
} from "./registry";
export {
  canaryFamily,
  canarySchema,
  DEFAULT_CANARY_WEIGHT_TOTAL,
  isCanaryIngress,
  parseCanary,
} from "./canary";
export type {
  CanaryActions,
  CanaryConfig,
  CanaryMatch,
  CanarySource,
  HeaderAction,
  ModOperator,
  ModRule,
  QueryParam,
} from "./canary";
export { CORS_DEFAULTS, corsFamily, corsSchema, parseCors, type CorsConfig } from "./cors";
export {
  INGRESS_NGINX_PROXY_DEFAULTS,
  parseProxy,
  proxyFamily,
  proxySchema,
  type ProxyConfig,
} from "./proxy";
export { parseRedirect, redirectFamily, redirectSchema, type RedirectConfig } from "./redirect";
export { parseRewrite, rewriteFamily, rewriteSchema, type RewriteConfig } from "./rewrite";
export { parseRobots, robotsFamily, robotsSchema, type RobotsConfig } from "./robots";
export {
  parseSourceRange,
  sourceAllowed,
  sourceRangeFamily,
  sourceRangeSchema,
  type SourceRangeConfig,
} from "./source-range";
export {
  DEFAULT_BURST_MULTIPLIER,
  limitExempt,
  limitsAnything,
  parseRateLimit,
  rateLimitFamily,
  rateLimitSchema,
  type Bandwidth,
  type RateLimitConfig,
} from "./rate-limit";
export {
  ingressRolloutFamily,
  parseIngressRollout,
  parseSecretRollout,
  podOrdinalFromName,
  rolloutApplies,
  rolloutFamily,
  secretRolloutFamily,
  rolloutSchema,
  type RolloutConfig,
  type RolloutWord,
} from "./rollout";
export { parseVersion, versionFamily, versionSchema, type VersionConfig } from "./version";
export {
  parseReferrers,
  referrerAllowed,
  referrerAllowList,
  referrerFamily,
  type ReferrerConfig,
} from "./referrer";
export {
  DEFAULT_PROXY_SSL_PROTOCOLS,
  DEFAULT_VERIFY_DEPTH,
  parseUpstream,
  upstreamFamily,
  upstreamSchema,
  type BackendProtocol,
  type SecretRef,
  type TlsVersion,
  type UpstreamConfig,
  type UpstreamSsl,
} from "./upstream";
export {
  APP_ROOT_STATUS,
  parseUrlRedirect,
  urlRedirectFamily,
  type UrlRedirect,
  type UrlRedirectConfig,
} from "./url-redirect";
export {
  hostNamesFamily,
  parseHostNames,
  wwwCounterpart,
  type HostNamesConfig,
} from "./host-names";
export { errorPagesFamily, parseErrorPages, type ErrorPagesConfig } from "./error-pages";
export { bufferingFamily, parseBuffering, type BufferingConfig } from "./buffering";
export {
  DEFAULT_SUBSET_SIZE,
  loadBalancingFamily,
  parseLoadBalancing,
  type HashPart,
  type LoadBalance,
  type LoadBalancingConfig,
} from "./load-balancing";
export {
  affinityFamily,
  COOKIE_AFFINITY_DEFAULTS,
  DEFAULT_AFFINITY_COOKIE,
  parseAffinity,
  type AffinityConfig,
  type AffinityMode,
  type CookieAffinity,
  type SameSite,
} from "./affinity";
export {
  authSecretKey,
  basicAuthFamily,
  basicAuthNamespaceErrors,
  parseBasicAuth,
  type AuthSecretType,
  type BasicAuthConfig,
} from "./basic-auth";
export {
  cacheSeconds,
  externalAuthFamily,
  parseExternalAuth,
  type CacheRule,
  type ExternalAuthConfig,
  type UrlPart,
  type UrlTemplate,
} from "./external-auth";
