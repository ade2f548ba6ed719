// Tengine-Ingress's per-object IDs, reproduced exactly (internal/ingress/controller/ingcheck.go
// getIngID, secretcheck.go getSecretID) so that a checksum made by a Tengine producer verifies:
//   Ingress  "<N>-<V>"
//   Secret   "<N>-<V>-<sha1 hex of the leaf certificate's DER>"
// N is the integer after the last "-" of metadata.name, V the integer version annotation; both
// are parsed as Go's strconv.Atoi parses and printed as Go's %d prints (so "007" gives 7).
import { fail, ok, type FieldError, type Result } from "../result";
import { parseGoInt } from "../go-strconv";
import { leafCertificateSha1 } from "./certificate";
import {
  TLS_CERT_KEY,
  TLS_KEY_KEY,
  VERSION_ANNOTATION,
  type IdOptions,
  type IngressLike,
  type ObjectMetaLike,
  type SecretLike,
} from "./objects";

/** `"<N>-<V>"`, or why Tengine leaves the object out of the checksum (it still serves). */
export function tengineNameAndVersion(metadata: ObjectMetaLike | undefined): Result<string> {
  const errors: FieldError[] = [];
  const version = versionOf(metadata?.annotations, errors);
  const suffix = nameSuffixOf(metadata?.name, errors);
  return errors.length > 0 ? fail(errors) : ok(`${suffix}-${version}`);
}

function versionOf(
  annotations: Record<string, string> | undefined,
  errors: FieldError[],
): string | undefined {
  const field = `metadata.annotations["${VERSION_ANNOTATION}"]`;
  const raw = annotations?.[VERSION_ANNOTATION];
  if (raw === undefined) {
    errors.push({ field, message: `no ${VERSION_ANNOTATION} annotation` });
    return undefined;
  }
  const version = parseGoInt(raw);
  if (version === undefined) {
    errors.push({ field, message: `${VERSION_ANNOTATION} is not an integer: "${raw}"` });
  } else if (version === "0") {
    // Tengine reads 0 as "no version" (checksum.DefaultIngVer).
    errors.push({ field, message: `${VERSION_ANNOTATION} is 0` });
  }
  return version;
}

function nameSuffixOf(name: string | undefined, errors: FieldError[]): string | undefined {
  const field = "metadata.name";
  const dash = name?.lastIndexOf("-") ?? -1;
  // Tengine wants at least two "-"-separated parts, so a name without "-" never counts.
  const suffix = name !== undefined && dash >= 0 ? parseGoInt(name.slice(dash + 1)) : undefined;
  if (suffix === undefined) {
    errors.push({ field, message: `name does not end in "-<integer>": "${name ?? ""}"` });
  }
  return suffix;
}

/** Tengine's Ingress ID `"<N>-<V>"`, with the reason when the Ingress is left out. */
export function tengineIngressIdResult(ingress: IngressLike): Result<string> {
  return tengineNameAndVersion(ingress.metadata);
}

/** Tengine's Ingress ID `"<N>-<V>"`, or undefined for an Ingress that Tengine leaves out. */
export function tengineIngressId(ingress: IngressLike): string | undefined {
  const result = tengineIngressIdResult(ingress);
  return result.ok ? result.value : undefined;
}

/** Tengine's Secret ID `"<N>-<V>-<leaf sha1>"`, with the reason when the Secret is left out. */
export function tengineSecretIdResult(secret: SecretLike, options: IdOptions = {}): Result<string> {
  const nameAndVersion = tengineNameAndVersion(secret.metadata);
  // The certificate is the expensive part: skip it when the Secret is out anyway.
  if (!nameAndVersion.ok) return nameAndVersion;
  const decoded = options.secretData === "decoded";
  const cert = pemText(secret.data?.[TLS_CERT_KEY], decoded);
  const key = pemText(secret.data?.[TLS_KEY_KEY], decoded);
  const sha1 = leafCertificateSha1(cert, key);
  return sha1.ok ? ok(`${nameAndVersion.value}-${sha1.value}`) : sha1;
}

/** Tengine's Secret ID `"<N>-<V>-<leaf sha1>"`, or undefined for a Secret Tengine leaves out. */
export function tengineSecretId(secret: SecretLike, options: IdOptions = {}): string | undefined {
  const result = tengineSecretIdResult(secret, options);
  return result.ok ? result.value : undefined;
}

function pemText(value: string | undefined, decoded: boolean): string | undefined {
  if (value === undefined || decoded) return value;
  // PEM is ASCII; latin1 keeps any stray byte as one character instead of failing.
  return Buffer.from(value, "base64").toString("latin1");
}
