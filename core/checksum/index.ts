// The checksum's public surface: per-object IDs in `tengine` and `content` mode, the checksum of
// a set of IDs, and incremental verification against published IngressCheckSum and
// SecretCheckSum objects (../shared/DESIGN.md, "The checksum: two modes").

/** Canonical JSON, as content mode hashes it. */
export { canonicalJson } from "./canonical-json";
/** UTF-8 byte order, the order that IDs are sorted in. */
export { compareUtf8, sortUtf8 } from "./byte-order";
/** Tengine-Ingress's IDs, and Go's strconv.Atoi that they rest on. */
export { parseGoInt } from "../go-strconv";
export {
  tengineIngressId,
  tengineIngressIdResult,
  tengineSecretId,
  tengineSecretIdResult,
} from "./tengine";
/** The leaf certificate of a TLS Secret, as Tengine finds it. */
export { firstPemBlock, leafCertificateSha1, type PemBlock } from "./certificate";
/** Content-mode IDs and the documents they hash. */
export {
  contentIngressId,
  contentIngressIdResult,
  contentSecretId,
  contentSecretIdResult,
  ingressContent,
  secretContent,
  type IngressContent,
  type SecretContent,
} from "./content";
/** From IDs to a checksum, and the difference of two ID multisets. */
export { checksumOfIds, diffIds, type IdDiff } from "./id-set";
/** One-shot checksum of a list of objects. */
export {
  computeChecksum,
  idFunction,
  type ComputedChecksum,
  type IdFunction,
  type SkippedObject,
} from "./compute";
/** Incremental verification against published checksum objects. */
export {
  ChecksumTracker,
  type DiffSummary,
  type PublishedChecksum,
  type PublishedReport,
  type TrackerOptions,
  type Verification,
} from "./tracker";
/** The shapes of the objects read, and the names the checksum depends on. */
export {
  BULWARK_ANNOTATION_PREFIX,
  VERSION_ANNOTATION,
  type ChecksumKind,
  type ChecksumMode,
  type IdOptions,
  type IngressLike,
  type ObjectMetaLike,
  type ObjectOf,
  type SecretDataEncoding,
  type SecretLike,
} from "./objects";
/** Which namespaces' checksum objects are trusted. */
export {
  DEFAULT_PUBLISHER_NAMESPACES,
  isTrustedPublication,
  parsePublisherNamespaces,
} from "./publishers";
/** The guard's mode per kind: off, observe (report what enforce would refuse) or enforce. */
export { GUARD_MODES, GUARD_MODE_VARIABLES, parseGuardMode, type GuardMode } from "./guard-mode";
/** Ed25519-signed attestations and the keys that may sign them. */
export {
  attestationPayload,
  DEFAULT_KEYS_LOCATION,
  generateSigningKey,
  keyIdOf,
  parseKeysLocation,
  parseSigningKey,
  parseTrustedKeys,
  signAttestation,
  verifyAttestation,
  type Attestation,
  type AttestationSignature,
  type KeysLocation,
  type SignatureProblem,
  type SignatureVerdict,
  type TrustedKeys,
} from "./signature";
