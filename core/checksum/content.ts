// Content-mode IDs: Bulwark's default, which also catches a changed spec under an unchanged
// version and a renamed object (../shared/DESIGN.md). External publishers must reproduce this
// byte for byte, so the hashed document is spelled out here:
//
//   ID      = "<namespace>/<name>@" + lowercase hex SHA-256 of the UTF-8 canonical JSON
//             (./canonical-json.ts) of the document below
//   Ingress   {"annotations":{…},"spec":{…}}
//   Secret    {"annotations":{…},"data":{…},"type":"…"}
//
//   annotations  only keys that start with exactly "nginx.ingress.kubernetes.io/" or
//                "bulwark.dev/" (not "permission.bulwark.dev/"); {} when there are none
//   spec         the Ingress spec as stored; {} when absent (the API server stores {} anyway)
//   data         the Secret's data as stored, every value base64; {} when absent
//   type         the Secret's type; "Opaque" when absent (the API server's default)
//
// Nothing else is hashed: no status, resourceVersion, managedFields, labels, or
// kubectl.kubernetes.io/last-applied-configuration, which a publisher working from its own YAML
// could never reproduce.
import { fail, ok, type FieldError, type Result } from "../result";
import { canonicalJson } from "./canonical-json";
import { hexDigest } from "./digest";
import { NGINX_ANNOTATION_PREFIX } from "../names";
import {
  BULWARK_ANNOTATION_PREFIX,
  type IdOptions,
  type IngressLike,
  type ObjectMetaLike,
  type SecretLike,
} from "./objects";

export interface IngressContent {
  annotations: Record<string, string>;
  spec: unknown;
}

export interface SecretContent {
  annotations: Record<string, string>;
  data: Record<string, string>;
  type: string;
}

/** The document that an Ingress's content ID hashes. */
export function ingressContent(ingress: IngressLike): IngressContent {
  return {
    annotations: hashedAnnotations(ingress.metadata?.annotations),
    spec: ingress.spec ?? {},
  };
}

/**
 * The document that a Secret's content ID hashes. With `secretData: "decoded"` the values are
 * encoded back to base64 from UTF-8, which restores what the API server stores for every value
 * that Pepr decoded; Pepr leaves non-ASCII values encoded without saying which, so hash those
 * Secrets from the undecoded object.
 */
export function secretContent(secret: SecretLike, options: IdOptions = {}): SecretContent {
  const data = secret.data ?? {};
  return {
    annotations: hashedAnnotations(secret.metadata?.annotations),
    data: options.secretData === "decoded" ? encodeValues(data) : data,
    type: secret.type || "Opaque",
  };
}

function hashedAnnotations(
  annotations: Record<string, string> | undefined,
): Record<string, string> {
  const hashed: Record<string, string> = {};
  // for-in and two fixed prefixes: this runs for each of 100k objects in a full verify.
  for (const key in annotations) {
    if (key.startsWith(NGINX_ANNOTATION_PREFIX) || key.startsWith(BULWARK_ANNOTATION_PREFIX)) {
      hashed[key] = annotations[key] ?? "";
    }
  }
  return hashed;
}

function encodeValues(data: Record<string, string>): Record<string, string> {
  const encoded: Record<string, string> = {};
  for (const key of Object.keys(data)) {
    encoded[key] = Buffer.from(data[key] ?? "", "utf8").toString("base64");
  }
  return encoded;
}

/** Content ID of an Ingress, or why it has none (no namespace or name). */
export function contentIngressIdResult(ingress: IngressLike): Result<string> {
  return contentId(ingress.metadata, () => ingressContent(ingress));
}

/** Content ID of a Secret, or why it has none (no namespace or name). */
export function contentSecretIdResult(secret: SecretLike, options: IdOptions = {}): Result<string> {
  return contentId(secret.metadata, () => secretContent(secret, options));
}

/** `"<namespace>/<name>@<sha256>"`, or undefined for an object without a namespace or name. */
export function contentIngressId(ingress: IngressLike): string | undefined {
  const result = contentIngressIdResult(ingress);
  return result.ok ? result.value : undefined;
}

/** `"<namespace>/<name>@<sha256>"`, or undefined for an object without a namespace or name. */
export function contentSecretId(secret: SecretLike, options: IdOptions = {}): string | undefined {
  const result = contentSecretIdResult(secret, options);
  return result.ok ? result.value : undefined;
}

function contentId(metadata: ObjectMetaLike | undefined, document: () => unknown): Result<string> {
  const namespace = metadata?.namespace;
  const name = metadata?.name;
  if (!namespace || !name) {
    const errors: FieldError[] = [];
    // An admission request may carry its object without metadata.namespace: callers fill it in.
    if (!namespace) errors.push({ field: "metadata.namespace", message: "no metadata.namespace" });
    if (!name) errors.push({ field: "metadata.name", message: "no metadata.name" });
    return fail(errors);
  }
  return ok(`${namespace}/${name}@${hexDigest("sha256", canonicalJson(document()))}`);
}
