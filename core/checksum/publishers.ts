// Who may attest: checksum objects count only in the publisher namespaces. Anyone who can create
// an IngressCheckSum next to their own Ingress could otherwise attest it themselves, and the
// publisher's attestation would mean nothing. The gateway, the Pepr guard and the CLI share this.
import { fail, ok, type Result } from "../result";

export const DEFAULT_PUBLISHER_NAMESPACES: readonly string[] = ["bulwark-system"];

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: a comma-separated list (spaces allowed); unset or empty
 * means bulwark-system. There is no "everywhere": trust is always named.
 */
export function parsePublisherNamespaces(raw: string | undefined): Result<ReadonlySet<string>> {
  const names = (raw ?? "")
    .split(",")
    .map(name => name.trim())
    .filter(name => name !== "");
  const bad = names.find(name => name.length > 63 || !NAMESPACE.test(name));
  if (bad !== undefined) {
    const message = `expected namespace names separated by ",", got ${JSON.stringify(bad)}`;
    return fail([{ field: "publisherNamespaces", message }]);
  }
  return ok(new Set(names.length > 0 ? names : DEFAULT_PUBLISHER_NAMESPACES));
}

/** Whether a checksum object sits where attestations are trusted. */
export function isTrustedPublication(
  object: { metadata?: { namespace?: string } },
  publishers: ReadonlySet<string>,
): boolean {
  return publishers.has(object.metadata?.namespace ?? "");
}
