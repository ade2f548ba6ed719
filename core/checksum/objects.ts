// The least of an Ingress and a Secret that the checksum reads. Structural, so that objects from
// Pepr, kubernetes-fluent-client, client-node or JSON.parse all fit without a conversion.
import { NGINX_ANNOTATION_PREFIX } from "../names";

export interface ObjectMetaLike {
  name?: string;
  namespace?: string;
  annotations?: Record<string, string>;
}

export interface IngressLike {
  metadata?: ObjectMetaLike;
  spec?: unknown;
}

export interface SecretLike {
  metadata?: ObjectMetaLike;
  type?: string;
  /** As Kubernetes stores it, each value base64; see {@link SecretDataEncoding}. */
  data?: Record<string, string>;
}

export type ChecksumKind = "Ingress" | "Secret";

/** `tengine` reproduces Tengine-Ingress; `content` hashes what serves (DESIGN.md). */
export type ChecksumMode = "tengine" | "content";

export type ObjectOf<K extends ChecksumKind> = K extends "Ingress" ? IngressLike : SecretLike;

/**
 * How a Secret's `data` values arrive: `base64` as the API server stores and lists them, or
 * `decoded` as Pepr hands them to admission and watch callbacks (it decodes only values whose
 * decoded text is ASCII, which PEM always is).
 */
export type SecretDataEncoding = "base64" | "decoded";

export interface IdOptions {
  /** Defaults to `base64`. */
  secretData?: SecretDataEncoding;
}

/** The integer `version` annotation that Tengine reads from both Ingresses and Secrets. */
export const VERSION_ANNOTATION = `${NGINX_ANNOTATION_PREFIX}version`;

/**
 * Bulwark's own annotations. Content mode hashes the annotations under exactly this prefix and
 * `nginx.ingress.kubernetes.io/`: `permission.bulwark.dev/` and other sub-domains do not match.
 */
export const BULWARK_ANNOTATION_PREFIX = "bulwark.dev/";

export const TLS_CERT_KEY = "tls.crt";
export const TLS_KEY_KEY = "tls.key";
