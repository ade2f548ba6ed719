// `bulwark checksum compute|publish`: Bulwark's producer of IngressCheckSum/SecretCheckSum
// objects, the role Tengine-Ingress leaves to an external control plane.
import { createPublicKey, randomBytes, type KeyObject } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dump } from "js-yaml";
import { K8s, kind as k } from "kubernetes-fluent-client";
import {
  computeChecksum,
  generateSigningKey,
  keyIdOf,
  signAttestation,
  type ChecksumMode,
  type ComputedChecksum,
} from "../core/checksum";
import { CHECKSUM_GROUP, INGRESS_CLASS } from "../core/names";
import { isDefaultClass } from "../core/ingress/class";
import { countsForChecksum, refusedReferrer, type ServingScope } from "../core/ingress/selection";
import { newestFirst } from "../core/checksum/window";
import { isNotFound } from "../kube/api-errors";
import type { Ingress, Secret } from "../core/ingress/types";
import { CHECKSUM_VERSION, checksumKinds, type ChecksumKind } from "../core/checksum/crd";
import { checksumModel } from "../kube/checksum-kinds";
import { describeObject, InputError, readObjects, type SourcedObject } from "./read-objects";
import { inspectTlsPair } from "../core/tls/certificate";
import { formatErrors } from "../core/result";
import { counted, NO_PROGRESS, type Progress } from "./progress";

const OBJECT_KIND = { ingress: "Ingress", secret: "Secret" } as const;

export interface ChecksumOptions {
  kind: ChecksumKind;
  mode: ChecksumMode;
  /** An Ed25519 private key: the object gets spec.signature (--sign-key). */
  signKey?: KeyObject;
}

function notCounted(kind: ChecksumKind, object: Ingress | Secret, scope: ServingScope): string {
  const namespace = object.metadata?.namespace ?? "";
  if (scope.excludedNamespaces.has(namespace)) return `in excluded namespace ${namespace}`;
  if (kind === "secret") return "not of type kubernetes.io/tls";
  const referrer = refusedReferrer(object as Ingress, scope);
  if (referrer !== undefined)
    return `its ingress-referrer ${JSON.stringify(referrer)} is not in --ingress-referrers`;
  return scope.classIsDefault
    ? "of another IngressClass"
    : "not of IngressClass bulwark (and bulwark is not the default class: --default-class)";
}

/** Kubernetes folds `stringData` into `data` on write; a publisher reading YAML must do the same. */
function asStored(object: SourcedObject["object"]): Ingress | Secret {
  const stringData = object.stringData as Record<string, string> | undefined;
  if (!stringData) return object as Ingress | Secret;
  const data = { ...(object.data as Record<string, string> | undefined) };
  for (const [key, value] of Object.entries(stringData))
    data[key] = Buffer.from(value).toString("base64");
  const stored: Record<string, unknown> = { ...object, data };
  delete stored.stringData;
  return stored as Secret;
}

function checkSecret(sourced: SourcedObject, secret: Secret): void {
  const decode = (key: string): string =>
    Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
  // No date: expiry is admission's business, readability is ours.
  const facts = inspectTlsPair(decode("tls.crt"), decode("tls.key"), undefined);
  if (!facts.ok) throw new InputError(`${describeObject(sourced)}: ${formatErrors(facts.errors)}`);
}

/** The objects of `kind` in the files; anything else is an error naming the file and the object. */
/**
 * The objects of `kind` in the files that count for the checksum. Other kinds (a ConfigMap in
 * the same folder) and objects the gateway does not serve are left out with a line saying so;
 * an object without a name or namespace, or the same object twice, is an error: the checksum
 * would silently be of something else than what will be applied.
 */
export function objectsFromFiles(
  paths: string[],
  kind: ChecksumKind,
  scope: ServingScope,
  progress: Progress = NO_PROGRESS,
): { objects: (Ingress | Secret)[]; ignored: string[] } {
  const objects: (Ingress | Secret)[] = [];
  const ignored: string[] = [];
  const seen = new Map<string, string>();
  const read = readObjects(paths, (done, total) =>
    progress.update(counted("reading", done, total, "files")),
  );
  progress.clear();
  for (const sourced of read) {
    if (sourced.object.kind !== OBJECT_KIND[kind]) {
      ignored.push(
        `${describeObject(sourced)}: not a${kind === "ingress" ? "n Ingress" : " Secret"} (--kind ${kind})`,
      );
      continue;
    }
    const { name, namespace } = sourced.object.metadata ?? {};
    if (!name) throw new InputError(`${describeObject(sourced)}: has no metadata.name`);
    if (!namespace) {
      throw new InputError(
        `${describeObject(sourced)}: has no metadata.namespace; write the namespace it is applied in`,
      );
    }
    const first = seen.get(`${namespace}/${name}`);
    if (first !== undefined) {
      throw new InputError(`${describeObject(sourced)}: the same object as in ${first}`);
    }
    seen.set(`${namespace}/${name}`, sourced.source);
    const object = asStored(sourced.object);
    if (!countsForChecksum(kind, object, scope)) {
      ignored.push(`${describeObject(sourced)}: ${notCounted(kind, object, scope)}`);
      continue;
    }
    if (kind === "secret") checkSecret(sourced, object as Secret);
    objects.push(object);
  }
  return { objects, ignored };
}

export function compute(objects: (Ingress | Secret)[], options: ChecksumOptions): ComputedChecksum {
  return computeChecksum(OBJECT_KIND[options.kind], options.mode, objects);
}

export function checksumObject(
  result: ComputedChecksum,
  options: ChecksumOptions & { namespace: string; now: Date },
) {
  const names = checksumKinds[options.kind];
  const stamp = options.now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const attested = {
    kind: names.kind,
    mode: options.mode,
    checksum: result.checksum,
    timestamp: options.now.toISOString(),
    ids: result.ids,
  };
  return {
    apiVersion: `${CHECKSUM_GROUP}/${CHECKSUM_VERSION}`,
    kind: names.kind,
    metadata: {
      name: `${options.kind}-checksum-${stamp}-${randomBytes(2).toString("hex")}`,
      namespace: options.namespace,
    },
    spec: {
      timestamp: options.now.toISOString(),
      checksum: result.checksum,
      ids: result.ids,
      mode: options.mode,
      ...(options.signKey ? { signature: signAttestation(attested, options.signKey) } : {}),
    },
  };
}

export function render(
  result: ComputedChecksum,
  options: ChecksumOptions & { output: "json" | "yaml"; namespace: string },
): string {
  if (options.output === "yaml")
    return dump(checksumObject(result, { ...options, now: new Date() }), { lineWidth: -1 });
  return (
    JSON.stringify(
      { kind: options.kind, mode: options.mode, checksum: result.checksum, ids: result.ids },
      null,
      2,
    ) + "\n"
  );
}

/** A checksum object as the guard orders publications (core/checksum/window.ts). */
function publication(object: { metadata?: { name?: string; creationTimestamp?: Date | string } }) {
  const created = object.metadata?.creationTimestamp;
  const createdMs = created instanceof Date ? created.getTime() : Date.parse(String(created ?? ""));
  return { name: object.metadata?.name ?? "", createdMs };
}

/** Whether the cluster's IngressClass bulwark is its default (a missing class is not). */
async function classIsDefault(): Promise<boolean> {
  try {
    return isDefaultClass(await K8s(k.IngressClass).Get(INGRESS_CLASS));
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * Reads the cluster, creates a new checksum object, deletes the older ones of that kind in the
 * namespace. Whether class-less Ingresses count is read from the IngressClass, as the guard does.
 */
export async function publish(
  options: ChecksumOptions & { namespace: string; scope: Omit<ServingScope, "classIsDefault"> },
  say: (line: string) => void,
  progress: Progress = NO_PROGRESS,
): Promise<void> {
  const scope = { ...options.scope, classIsDefault: await classIsDefault() };
  // One list call: the cluster's objects at one resourceVersion, so no count to show until it ends.
  progress.update(`listing ${OBJECT_KIND[options.kind]} objects in every namespace…`);
  const listed =
    options.kind === "ingress" ? await K8s(k.Ingress).Get() : await K8s(k.Secret).Get();
  progress.clear();
  const objects = (listed.items as (Ingress | Secret)[]).filter(o =>
    countsForChecksum(options.kind, o, scope),
  );
  const excluded = [...scope.excludedNamespaces].join(", ") || "none";
  say(
    `read ${objects.length} ${OBJECT_KIND[options.kind]} objects that count (of ${listed.items.length} listed; ` +
      `IngressClass ${INGRESS_CLASS} ${scope.classIsDefault ? "is" : "is not"} the default; excluded namespaces: ${excluded})`,
  );
  const result = compute(objects, options);
  for (const skipped of result.skipped) say(`  left out ${skipped.key}: ${skipped.reason}`);
  const model = checksumModel[options.kind];
  const created = await K8s(model).Create(checksumObject(result, { ...options, now: new Date() }));
  const signedBy = options.signKey
    ? `, signed by ${keyIdOf(createPublicKey(options.signKey))}`
    : "";
  say(
    `created ${created.kind} ${options.namespace}/${created.metadata?.name}: ${result.ids.length} IDs, ${options.mode} mode, checksum ${result.checksum}${signedBy}`,
  );
  // The one before stays: gateways still on the previous state trust it for the grace period
  // (BULWARK_CHECKSUM_GRACE_SECONDS); the next publish deletes it. Older ones go now.
  const existing = await K8s(model).InNamespace(options.namespace).Get();
  const others = existing.items
    .filter(o => o.metadata?.name !== created.metadata?.name)
    .sort((a, b) => newestFirst(publication(a), publication(b)));
  const [previous, ...older] = others;
  if (previous)
    say(
      `kept ${created.kind} ${options.namespace}/${previous.metadata?.name}: the previous one, trusted for the grace period`,
    );
  for (const [index, old] of older.entries()) {
    progress.update(counted("deleting", index + 1, older.length, `older ${created.kind} objects`));
    await K8s(model).Delete(old);
    say(`deleted older ${created.kind} ${options.namespace}/${old.metadata?.name}`);
  }
  progress.clear();
}

/**
 * `bulwark checksum keygen --out FILE`: a new Ed25519 key pair. The private key goes to FILE
 * (mode 0600, never over an existing file), the public key to FILE.pub; what to do with each is
 * said.
 */
export function keygen(
  out: string,
  namespace: string,
  name: string,
  say: (line: string) => void,
): void {
  const key = generateSigningKey();
  writeFileSync(out, key.privateKeyPem, { mode: 0o600, flag: "wx" });
  writeFileSync(`${out}.pub`, key.publicKeyPem, { flag: "wx" });
  say(
    `wrote the private key to ${out} (keep it where only the publisher reads it) and the public key to ${out}.pub`,
  );
  say(`key id ${key.keyId}`);
  say(`trust it (keep the old entries during a rotation; remove one to stop trusting it):`);
  say(
    `  kubectl create configmap ${name} -n ${namespace} --from-file=${key.keyId}.pem=${out}.pub  # or: kubectl edit configmap ${name} -n ${namespace}`,
  );
  say(`sign with it: bulwark checksum publish --kind ingress -n ${namespace} --sign-key ${out}`);
}
