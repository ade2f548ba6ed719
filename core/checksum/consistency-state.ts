// What the guard knows: the cluster's Ingresses and TLS Secrets, tracked in both checksum modes,
// and the published checksum objects. No I/O: the reconciler feeds it events and lists, and
// reads an Observation per checksum object.
import { withoutBookkeeping } from "../bookkeeping";
import {
  ChecksumTracker,
  parseTrustedKeys,
  verifyAttestation,
  type ChecksumMode,
  type KeysLocation,
  type SignatureProblem,
  type TrustedKeys,
} from ".";
import { ok, type Result } from "../result";
import {
  countsForChecksum,
  DEFAULT_SCOPE,
  sameScope,
  type ServingScope,
} from "../ingress/selection";
import type { Ingress, Secret } from "../ingress/types";
import { checksumKinds, checksumSpecSchema, type ChecksumKind } from "./crd";
import { trustWindow, type TrustWindow } from "./window";
import type { ChecksumObject } from "./crd";
import type { Observation } from "./status";
import { objectKey } from "../object-key";

/** How long the checksum object before the newest still counts, by default. */
export const DEFAULT_GRACE_MS = 60_000;

const TRACKER_KIND = { ingress: "Ingress", secret: "Secret" } as const;
const MODES: ChecksumMode[] = ["tengine", "content"];

type Watched = Ingress | Secret;

interface Published {
  object: ChecksumObject;
  mode: ChecksumMode;
  checksum?: string;
  ids?: string[];
  invalidSpec?: string;
  /** Signatures are required and this one is missing or wrong: the object is ignored. */
  signatureProblem?: { reason: SignatureProblem; message: string };
  /** With signatures required: spec.timestamp (signed) in ms, which orders the objects. */
  signedMs?: number;
}

/**
 * Whether checksum objects must carry a valid signature by one of `keys`. Required, an unsigned
 * or wrongly signed object is ignored, and objects are ordered by their signed timestamp, not
 * by creation: a validly signed old object created again (a replay) is not the newest.
 */
export interface SignaturePolicy {
  required: boolean;
  keys: TrustedKeys;
}

export const NO_SIGNATURES: SignaturePolicy = { required: false, keys: new Map() };

class KindState {
  readonly trackers: Record<ChecksumMode, ChecksumTracker<"Ingress" | "Secret">>;
  /** key -> resourceVersion of what the trackers hold: an unchanged object is never rehashed. */
  readonly versions = new Map<string, string>();
  /** Every object seen, counted or not: a change of scope re-decides them all. */
  readonly seen = new Map<string, Watched>();
  readonly published = new Map<string, Published>();

  constructor(kind: ChecksumKind) {
    const trackerKind = TRACKER_KIND[kind];
    this.trackers = {
      tengine: new ChecksumTracker(trackerKind, "tengine"),
      content: new ChecksumTracker(trackerKind, "content"),
    };
  }
}

function invalidSpecMessage(issue: { path: PropertyKey[]; message: string } | undefined): string {
  return `spec.${issue?.path.map(String).join(".") ?? ""}: ${issue?.message ?? "invalid"}`;
}

function creationOrder(object: ChecksumObject): string {
  const created = object.metadata?.creationTimestamp;
  return created instanceof Date ? created.toISOString() : String(created ?? "");
}

export class ConsistencyState {
  readonly #kinds: Record<ChecksumKind, KindState> = {
    ingress: new KindState("ingress"),
    secret: new KindState("secret"),
  };
  #scope: ServingScope;
  readonly #graceMs: number;
  #signatures: SignaturePolicy;

  /** `graceMs`: how long the checksum object before the newest still counts (a publish in flight). */
  constructor(
    scope: ServingScope = DEFAULT_SCOPE,
    graceMs = DEFAULT_GRACE_MS,
    signatures: SignaturePolicy = NO_SIGNATURES,
  ) {
    this.#scope = scope;
    this.#graceMs = graceMs;
    this.#signatures = signatures;
  }

  /** Which published objects of the kind may match now, and until when the window holds. */
  window(kind: ChecksumKind, nowMs = Date.now()): TrustWindow {
    const required = this.#signatures.required;
    const published = [...this.#kinds[kind].published.entries()]
      .filter(([, p]) => !p.signatureProblem)
      .map(([name, p]) => ({
        name,
        createdMs: required ? (p.signedMs ?? NaN) : Date.parse(creationOrder(p.object)),
      }));
    return trustWindow(published, nowMs, this.#graceMs);
  }

  /** Takes new trusted keys or a new requirement and re-judges every published object. */
  setSignaturePolicy(policy: SignaturePolicy): void {
    this.#signatures = policy;
    for (const kind of ["ingress", "secret"] as const) {
      for (const { object } of [...this.#kinds[kind].published.values()])
        this.observeChecksum(kind, object);
    }
  }

  /**
   * The trusted keys from the data of the keys ConfigMap at `location` (its absence: none). An
   * entry that is not an Ed25519 public key is not half-applied: the keys before stay, and the
   * error names the entry. Returns the key IDs taken.
   */
  takeTrustedKeys(
    data: Readonly<Record<string, string>> | undefined,
    location: KeysLocation,
  ): Result<string[]> {
    const keys = parseTrustedKeys(data, `configmap ${location.namespace}/${location.name} data`);
    if (!keys.ok) return keys;
    this.setSignaturePolicy({ required: this.#signatures.required, keys: keys.value });
    return ok([...keys.value.keys()]);
  }

  get scope(): ServingScope {
    return this.#scope;
  }

  /**
   * Takes a new scope (the class became or stopped being the default, say) and re-decides every
   * object seen; returns the kinds whose counted set changed.
   */
  setScope(scope: ServingScope): ChecksumKind[] {
    if (sameScope(scope, this.#scope)) return [];
    this.#scope = scope;
    const changed: ChecksumKind[] = [];
    for (const kind of ["ingress", "secret"] as const) {
      let any = false;
      for (const object of [...this.#kinds[kind].seen.values()])
        any = this.#count(kind, object) || any;
      if (any) changed.push(kind);
    }
    return changed;
  }

  /** Takes an object's current version; returns whether anything changed. */
  observeObject(kind: ChecksumKind, object: Watched): boolean {
    // Kept for as long as the object lives, for every Ingress and TLS Secret of Bulwark's.
    this.#kinds[kind].seen.set(objectKey(object), withoutBookkeeping(object));
    return this.#count(kind, object);
  }

  #count(kind: ChecksumKind, object: Watched): boolean {
    const key = objectKey(object);
    if (!countsForChecksum(kind, object, this.#scope)) return this.#uncount(kind, key);
    const state = this.#kinds[kind];
    const version = object.metadata?.resourceVersion ?? "";
    if (version !== "" && state.versions.get(key) === version) return false;
    state.versions.set(key, version);
    for (const mode of MODES) state.trackers[mode].upsert(key, object);
    return true;
  }

  forgetObject(kind: ChecksumKind, key: string): boolean {
    this.#kinds[kind].seen.delete(key);
    return this.#uncount(kind, key);
  }

  #uncount(kind: ChecksumKind, key: string): boolean {
    const state = this.#kinds[kind];
    if (!state.versions.delete(key)) return false;
    for (const mode of MODES) state.trackers[mode].remove(key);
    return true;
  }

  observeChecksum(kind: ChecksumKind, object: ChecksumObject): void {
    const state = this.#kinds[kind];
    const key = objectKey(object);
    const previous = state.published.get(key);
    const next = this.#judge(kind, object);
    // Re-publishing the same checksum to the same tracker is cheap there; anything else starts over.
    if (previous && (previous.mode !== next.mode || !next.checksum))
      state.trackers[previous.mode].unpublish(key);
    state.published.set(key, next);
    if (next.checksum) {
      state.trackers[next.mode].publish({
        name: key,
        checksum: next.checksum,
        ids: next.ids,
        order: creationOrder(object),
      });
    }
  }

  /** What a checksum object attests, if anything: its spec read, its signature checked. */
  #judge(kind: ChecksumKind, object: ChecksumObject): Published {
    const spec = checksumSpecSchema.safeParse(object.spec ?? {});
    if (!spec.success)
      return { object, mode: "tengine", invalidSpec: invalidSpecMessage(spec.error.issues[0]) };
    const { mode, checksum, ids, timestamp, signature } = spec.data;
    const published: Published = { object, mode, checksum, ids };
    if (!this.#signatures.required) return published;
    const attestation = {
      kind: checksumKinds[kind].kind,
      mode,
      checksum: checksum ?? "",
      timestamp,
      ids,
    };
    const verdict = verifyAttestation(attestation, signature, this.#signatures.keys);
    if (!verdict.ok)
      return {
        object,
        mode,
        signatureProblem: { reason: verdict.reason, message: verdict.message },
      };
    return { ...published, signedMs: Date.parse(timestamp) };
  }

  forgetChecksum(kind: ChecksumKind, key: string): void {
    const state = this.#kinds[kind];
    const old = state.published.get(key);
    if (old) state.trackers[old.mode].unpublish(key);
    state.published.delete(key);
  }

  /** Replaces everything known of a kind with a fresh list (a resync); unchanged objects are not rehashed. */
  replaceAll(kind: ChecksumKind, objects: Watched[], checksums: ChecksumObject[]): void {
    const state = this.#kinds[kind];
    const listed = new Set(objects.map(o => objectKey(o)));
    for (const key of [...state.seen.keys()]) if (!listed.has(key)) this.forgetObject(kind, key);
    for (const object of objects) this.observeObject(kind, object);
    const published = new Set(checksums.map(o => objectKey(o)));
    for (const key of [...state.published.keys()])
      if (!published.has(key)) this.forgetChecksum(kind, key);
    for (const object of checksums) this.observeChecksum(kind, object);
  }

  /**
   * Whether the newest published checksum object of the kind matches (or, within the grace
   * period after it appeared, the one before it); undefined when none is published.
   */
  anyConsistent(kind: ChecksumKind, nowMs = Date.now()): boolean | undefined {
    const state = this.#kinds[kind];
    const { trusted } = this.window(kind, nowMs);
    // Nothing published, or nothing that may attest (every object unsigned where signatures are required).
    if (trusted.size === 0) return undefined;
    for (const name of trusted) {
      const published = state.published.get(name);
      if (published?.checksum && state.trackers[published.mode].report(name)?.matches) return true;
    }
    return false;
  }

  /** The checksum objects ignored for their signature (signatures required), and why. */
  ignored(kind: ChecksumKind): { name: string; reason: SignatureProblem; message: string }[] {
    return [...this.#kinds[kind].published.entries()].flatMap(([name, p]) =>
      p.signatureProblem ? [{ name, ...p.signatureProblem }] : [],
    );
  }

  /** One Observation per published checksum object of the kind. */
  observations(
    kind: ChecksumKind,
    nowMs = Date.now(),
  ): { object: ChecksumObject; observation: Observation }[] {
    const state = this.#kinds[kind];
    const window = this.window(kind, nowMs);
    const newest = [...window.trusted][0];
    return [...state.published.entries()].map(([key, published]) => {
      const observation = observe(kind, state.trackers[published.mode], key, published);
      if (published.signatureProblem) observation.signatureProblem = published.signatureProblem;
      else if (!window.trusted.has(key)) observation.supersededBy = newest;
      return { object: published.object, observation };
    });
  }
}

const NO_DIFF = { missing: [], unexpected: [], missingTotal: 0, unexpectedTotal: 0 };

function observe(
  kind: ChecksumKind,
  tracker: ChecksumTracker<"Ingress" | "Secret">,
  key: string,
  published: Published,
): Observation {
  const report = published.checksum ? tracker.report(key) : undefined;
  const diff = report?.diff ?? NO_DIFF;
  // A match needs no MD5 over every ID: the published checksum is the observed one.
  const observedChecksum = report?.matches ? report.checksum : tracker.checksum();
  return {
    kind,
    observedChecksum,
    objectCount: tracker.idCount,
    publishedChecksum: published.checksum,
    publishedCount: published.ids?.length,
    publishedIdsHash: report?.idsMatchChecksum,
    missing: diff.missing,
    unexpected: diff.unexpected,
    missingCount: diff.missingTotal,
    unexpectedCount: diff.unexpectedTotal,
    unexpectedObjects: diff.unexpected.length > 0 ? tracker.keysWithIds(diff.unexpected) : [],
    invalidSpec: published.invalidSpec,
  };
}
