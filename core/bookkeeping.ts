// Server bookkeeping that never changes what Bulwark decides: managedFields (often most of an
// object) and kubectl's last-applied annotation (a second copy of the object, a Secret's data
// included). Whatever keeps objects for long drops them on arrival: at 100k objects they are most
// of the memory. Neither is hashed by the checksum formula (checksum/content.ts) nor read by a
// review.

export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

interface WithMetadata {
  metadata?: { managedFields?: unknown; annotations?: Record<string, string> } & object;
}

/** `object` without managedFields and the last-applied annotation; the rest shared, not copied. */
export function withoutBookkeeping<T extends WithMetadata>(object: T): T {
  const metadata = object.metadata;
  if (!metadata) return object;
  const kept = { ...metadata };
  delete kept.managedFields;
  const annotations = kept.annotations;
  if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
    const rest = { ...annotations };
    delete rest[LAST_APPLIED_ANNOTATION];
    kept.annotations = rest;
  }
  return { ...object, metadata: kept };
}
