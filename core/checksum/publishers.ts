// Who may attest: checksum objects count only in the publisher namespaces. Anyone who can create
// an IngressCheckSum next to their own Ingress could otherwise attest it themselves, and the
// publisher's attestation would mean nothing. The gateway, the Pepr guard and the CLI share this.
import { parseNamespaceList } from "../ingress/selection";
import { ok, type Result } from "../result";

export const DEFAULT_PUBLISHER_NAMESPACES: readonly string[] = ["bulwark-system"];

/**
 * BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: a comma-separated list (spaces allowed); unset or empty
 * means bulwark-system. There is no "everywhere": trust is always named.
 */
export function parsePublisherNamespaces(raw: string | undefined): Result<ReadonlySet<string>> {
  const names = parseNamespaceList(raw ?? "", "publisherNamespaces");
  if (!names.ok || names.value.size > 0) return names;
  return ok(new Set(DEFAULT_PUBLISHER_NAMESPACES));
}

/** Whether a checksum object sits where attestations are trusted. */
export function isTrustedPublication(
  object: { metadata?: { namespace?: string } },
  publishers: ReadonlySet<string>,
): boolean {
  return publishers.has(object.metadata?.namespace ?? "");
}
