// Signed attestations: an Ed25519 signature over what a checksum object claims, so that being able
// to write in a publisher namespace is not enough to attest; holding the publisher's key is. The
// signed text is canonical JSON (canonical-json.ts) of the kind, the mode, the checksum, the
// timestamp and the SHA-256 of the canonical JSON of the IDs, so any field changed after signing
// (an ID added, an older timestamp) breaks the signature. Keys are identified by their own
// fingerprint, never by a name someone wrote next to them.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from "node:crypto";
import { fail, ok, type FieldError, type Result } from "../result";
import { canonicalJson } from "./canonical-json";

/** The fields of a checksum object that a signature covers. */
export interface Attestation {
  kind: "IngressCheckSum" | "SecretCheckSum";
  mode: "tengine" | "content";
  checksum: string;
  /** spec.timestamp: when the publisher attested, by its clock (it orders signed objects). */
  timestamp: string;
  ids?: readonly string[];
}

/** spec.signature. */
export interface AttestationSignature {
  /** The signing key's fingerprint (keyId below). */
  keyId: string;
  /** The Ed25519 signature, base64. */
  value: string;
}

/** Public keys by fingerprint: what a ConfigMap of PEM public keys becomes. */
export type TrustedKeys = ReadonlyMap<string, KeyObject>;

export type SignatureProblem = "Unsigned" | "BadSignature";

export type SignatureVerdict =
  | { ok: true; keyId: string }
  | { ok: false; reason: SignatureProblem; message: string };

/** The bytes that are signed. */
export function attestationPayload(attestation: Attestation): Buffer {
  const idsDigest = createHash("sha256")
    .update(canonicalJson([...(attestation.ids ?? [])]))
    .digest("hex");
  const { kind, mode, checksum, timestamp } = attestation;
  return Buffer.from(canonicalJson({ kind, mode, checksum, timestamp, idsDigest }), "utf8");
}

/** `ed25519-` and the first 16 hex digits of the SHA-256 of the key's SPKI encoding. */
export function keyIdOf(publicKey: KeyObject): string {
  const spki = publicKey.export({ type: "spki", format: "der" });
  return `ed25519-${createHash("sha256").update(spki).digest("hex").slice(0, 16)}`;
}

export function generateSigningKey(): {
  keyId: string;
  privateKeyPem: string;
  publicKeyPem: string;
} {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    keyId: keyIdOf(publicKey),
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** A private key file's text, as an Ed25519 signing key; the error says what the file is instead. */
export function parseSigningKey(pem: string, field: string): Result<KeyObject> {
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType === "ed25519") return ok(key);
    return fail([
      { field, message: `is a ${key.asymmetricKeyType} key; an Ed25519 key is needed` },
    ]);
  } catch (error) {
    return fail([{ field, message: `is not a PEM private key: ${(error as Error).message}` }]);
  }
}

export function signAttestation(
  attestation: Attestation,
  privateKey: KeyObject,
): AttestationSignature {
  const keyId = keyIdOf(createPublicKey(privateKey));
  const value = sign(null, attestationPayload(attestation), privateKey).toString("base64");
  return { keyId, value };
}

/**
 * A ConfigMap's data as trusted keys: every entry a PEM Ed25519 public key (the entry's name is
 * for people; the fingerprint identifies it). One bad entry is an error naming it, so a rotation
 * that went wrong is seen rather than half-applied.
 */
export function parseTrustedKeys(
  data: Readonly<Record<string, string>> | undefined,
  field: string,
): Result<TrustedKeys> {
  const keys = new Map<string, KeyObject>();
  const errors: FieldError[] = [];
  for (const [name, pem] of Object.entries(data ?? {})) {
    try {
      const key = createPublicKey(pem);
      if (key.asymmetricKeyType !== "ed25519")
        errors.push({
          field: `${field}.${name}`,
          message: `is a ${key.asymmetricKeyType} key; Ed25519 is needed`,
        });
      else keys.set(keyIdOf(key), key);
    } catch {
      errors.push({ field: `${field}.${name}`, message: "is not a PEM public key" });
    }
  }
  return errors.length > 0 ? fail(errors) : ok(keys);
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Whether `signature` (spec.signature, unchecked) is a valid signature of `attestation` by a trusted key. */
export function verifyAttestation(
  attestation: Attestation,
  signature: unknown,
  keys: TrustedKeys,
): SignatureVerdict {
  if (signature === undefined || signature === null)
    return {
      ok: false,
      reason: "Unsigned",
      message: "spec.signature is not set; signatures are required",
    };
  const { keyId, value } = signature as Partial<AttestationSignature>;
  if (typeof keyId !== "string" || typeof value !== "string" || !BASE64.test(value))
    return {
      ok: false,
      reason: "BadSignature",
      message: "spec.signature needs keyId and a base64 value",
    };
  const key = keys.get(keyId);
  if (key === undefined) {
    const known = [...keys.keys()].join(", ") || "none";
    return {
      ok: false,
      reason: "BadSignature",
      message: `spec.signature.keyId ${keyId} is not a trusted key (trusted: ${known})`,
    };
  }
  const valid = verify(null, attestationPayload(attestation), key, Buffer.from(value, "base64"));
  if (!valid)
    return {
      ok: false,
      reason: "BadSignature",
      message: `spec.signature does not verify with key ${keyId}: the object was changed after signing, or forged`,
    };
  return { ok: true, keyId };
}

/** Where the trusted public keys are: a ConfigMap, each entry one PEM key. */
export interface KeysLocation {
  namespace: string;
  name: string;
}

export const DEFAULT_KEYS_LOCATION: KeysLocation = {
  namespace: "bulwark-system",
  name: "bulwark-checksum-keys",
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** BULWARK_CHECKSUM_KEYS: `namespace/name` of that ConfigMap; unset means the default. */
export function parseKeysLocation(raw: string | undefined, field: string): Result<KeysLocation> {
  const text = (raw ?? "").trim();
  if (text === "") return ok(DEFAULT_KEYS_LOCATION);
  const [namespace = "", name = "", ...rest] = text.split("/");
  if (
    rest.length > 0 ||
    !DNS_LABEL.test(namespace) ||
    !DNS_SUBDOMAIN.test(name) ||
    name.length > 253
  )
    return fail([
      { field, message: `must be namespace/name of a ConfigMap; got ${JSON.stringify(raw)}` },
    ]);
  return ok({ namespace, name });
}
