// The Secrets the served Ingresses name in auth-secret, for the view. Only a Secret of the
// Ingress's own namespace is taken (admission refuses any other). The same Secret object gives
// the same entry, so an unchanged view compares equal by reference.
import type { V1Ingress, V1Secret } from "@kubernetes/client-node";
import { authSecretOf } from "../policy/basic-auth";
import type { AuthSecret } from "../view";

const entries = new WeakMap<V1Secret, AuthSecret>();

function entryOf(secret: V1Secret): AuthSecret {
  let entry = entries.get(secret);
  if (entry === undefined) {
    entry = {
      namespace: secret.metadata?.namespace ?? "",
      name: secret.metadata?.name ?? "",
      data: { ...secret.data },
    };
    entries.set(secret, entry);
  }
  return entry;
}

/**
 * The auth Secrets the Ingresses name, in a stable order; `secrets` undefined (not listed yet):
 * the previous view's. A missing one is a problem (its routes answer 503 when compiled).
 */
export function selectAuthSecrets(
  secrets: ReadonlyMap<string, V1Secret> | undefined,
  ingresses: readonly V1Ingress[],
  previous: readonly AuthSecret[] | undefined,
  problems: string[],
): AuthSecret[] {
  if (secrets === undefined) return [...(previous ?? [])];
  const wanted = new Set<string>();
  for (const ingress of ingresses) {
    const key = authSecretOf(ingress);
    if (key !== undefined) wanted.add(key);
  }
  const selected: AuthSecret[] = [];
  for (const key of [...wanted].sort()) {
    const secret = secrets.get(key);
    if (secret === undefined)
      problems.push(`Secret ${key} (auth-secret): not found (or not of type Opaque)`);
    else selected.push(entryOf(secret));
  }
  return selected;
}

/** Whether two lists hold the same entries (by reference, as selectAuthSecrets keeps them). */
export function sameAuthSecrets(
  a: readonly AuthSecret[] = [],
  b: readonly AuthSecret[] = [],
): boolean {
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}
