// The consistency reconciler (watcher side): keeps ConsistencyState current from Pepr's watch
// events plus its own periodic list (Pepr 1.1.4 drops failed callbacks and can miss events), and
// writes each checksum object's status, an Event on every change of Consistent, and metrics.
import { Log } from "pepr";
import { isTrustedPublication, type GuardMode } from "../../core/checksum";
import { objectKey } from "../../core/object-key";
import type { Ingress, Secret } from "../../core/ingress/types";
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import { backoffWait, UNBOUNDED_STEPS, type Backoff } from "../../core/backoff";
import { recordEvent } from "../pepr/events";
import {
  CHECKSUM_VERSION,
  checksumKinds,
  type ChecksumKind,
  type ChecksumStatus,
} from "../../core/checksum/crd";
import { CHECKSUM_GROUP } from "../../core/names";
import { CHECKSUMS, INGRESSES, SECRETS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import type { ChecksumObject } from "../../core/checksum/crd";
import { ConsistencyState } from "../../core/checksum/consistency-state";
import { classIsDefaultNow } from "./cluster-reads";
import { guardMetrics } from "./metrics";
import {
  guardModes,
  publisherNamespaces,
  readTrustedKeyData,
  settingsScope,
  signatureSettings,
} from "./scope";
import { isDefaultClass } from "../../core/ingress/class";
import { INGRESS_CLASS } from "../../core/names";
import { desiredStatus, isConsistent } from "../../core/checksum/status";

type IngressClassLike = { metadata?: { name?: string; annotations?: Record<string, string> } };

const KINDS: ChecksumKind[] = ["ingress", "secret"];
const COMPONENT = "ingress-guard";

export interface GuardOptions {
  /** Told of every Ingress and Secret listed by a resync or a change of scope. */
  onListed?: (ingresses: Ingress[], secrets: Secret[]) => Promise<void>;
  /** Quiet time before statuses are written, so a burst of events costs one pass. */
  debounceMs: number;
  /** Full re-list period: repairs anything a missed watch event left wrong. */
  resyncMs: number;
  maxRetryMs: number;
  /** The rollback window's grace (settings.ts). */
  graceMs: number;
}

export class ConsistencyGuard {
  readonly #signatures = signatureSettings();
  readonly state: ConsistencyState;
  /** The trusted keys' ConfigMap data last taken, to re-judge only on a change. */
  #keyData: string | undefined;
  readonly #options: GuardOptions;
  readonly #publishers = publisherNamespaces();
  readonly #modes = guardModes();
  /** "kind namespace/name" of the untrusted checksum objects already announced. */
  readonly #ignored = new Set<string>();
  /** One timer per kind for when the previous checksum object stops counting. */
  readonly #windowTimers: Partial<Record<ChecksumKind, NodeJS.Timeout>> = {};
  readonly #dirty = new Set<ChecksumKind>();
  /** The status last written (or read) per checksum object, to patch only on change. */
  readonly #written = new Map<string, string>();
  #primed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Status writes failed in a row; the next retry waits the backoff for this many. */
  #failures = 0;
  #running = false;

  constructor(options: Partial<GuardOptions> = {}) {
    this.#options = {
      debounceMs: 200,
      resyncMs: 300_000,
      maxRetryMs: 30_000,
      graceMs: 60_000,
      ...options,
    };
    this.state = new ConsistencyState(
      settingsScope(),
      this.#options.graceMs,
      // Required, nothing verifies until the keys are read: fail closed.
      { required: this.#signatures.required, keys: new Map() },
    );
  }

  /** Lists everything once, then re-lists every resync period. */
  start(): void {
    void this.#resync();
    setInterval(() => void this.#resync(), this.#options.resyncMs).unref();
  }

  onObject(kind: ChecksumKind, object: Ingress | Secret, deleted: boolean): void {
    const changed = deleted
      ? this.state.forgetObject(kind, objectKey(object))
      : this.state.observeObject(kind, object);
    if (changed) this.#markDirty(kind);
  }

  /** IngressClass bulwark changed: whether it is the default decides which Ingresses count. */
  onIngressClass(ingressClass: IngressClassLike, deleted: boolean): void {
    if (ingressClass.metadata?.name !== INGRESS_CLASS) return;
    const classIsDefault = !deleted && isDefaultClass(ingressClass);
    const changed = this.state.setScope({ ...this.state.scope, classIsDefault });
    for (const kind of changed) this.#markDirty(kind);
    if (changed.includes("ingress")) void this.#resync();
  }

  onChecksum(kind: ChecksumKind, object: ChecksumObject, deleted: boolean): void {
    const key = objectKey(object);
    if (!isTrustedPublication(object, this.#publishers)) {
      void this.#ignore(kind, object, deleted);
      return;
    }
    if (deleted) {
      this.state.forgetChecksum(kind, key);
      this.#written.delete(key);
    } else {
      this.state.observeChecksum(kind, object);
      this.#written.set(key, JSON.stringify(object.status ?? {}));
    }
    this.#markDirty(kind);
  }

  async #resync(): Promise<void> {
    try {
      const classIsDefault = await classIsDefaultNow();
      this.state.setScope({ ...this.state.scope, classIsDefault });
      await this.#readKeys();
      const api = keptAliveApi();
      const ingresses = await api.list<Ingress>(resourcePath(INGRESSES));
      // Only TLS Secrets count: a list of every Secret carried each Helm release and token too.
      const secrets = await api.list<Secret>(resourcePath(SECRETS), {
        fieldSelector: `type=${TLS_SECRET_TYPE}`,
      });
      await this.#options.onListed?.(ingresses, secrets);
      for (const kind of KINDS) {
        const objects = kind === "ingress" ? ingresses : secrets;
        const checksums = await this.#trustedChecksums(kind);
        this.state.replaceAll(kind, objects, checksums);
        Log.debug(
          { kind, objects: objects.length, checksums: checksums.length },
          "checksum resync listed",
        );
        for (const object of checksums)
          this.#written.set(objectKey(object), JSON.stringify(object.status ?? {}));
        this.#dirty.add(kind);
      }
      this.#primed = true;
      this.#schedule(0);
    } catch (error) {
      Log.warn({ err: String(error) }, "checksum resync failed; the next one retries");
    }
  }

  /**
   * The trusted keys, read on every resync (the module may only get ConfigMaps, not watch them:
   * a rotation shows in statuses within BULWARK_GUARD_RESYNC_SECONDS; the gateway watches it).
   * A bad entry leaves the keys before it in place.
   */
  async #readKeys(): Promise<void> {
    if (!this.#signatures.required) return;
    const { namespace, name } = this.#signatures.keys;
    const data = await readTrustedKeyData(this.#signatures.keys);
    const text = JSON.stringify(data ?? {});
    if (text === this.#keyData) return;
    const taken = this.state.takeTrustedKeys(data, this.#signatures.keys);
    if (!taken.ok) {
      Log.error(
        { ns: namespace, name, errors: taken.errors.map(e => `${e.field} ${e.message}`) },
        "trusted checksum keys not taken; the previous ones stay",
      );
      return;
    }
    this.#keyData = text;
    Log.info({ ns: namespace, name, keyIds: taken.value }, "trusted checksum keys");
  }

  /** The kind's checksum objects in the publisher namespaces; the others are announced ignored. */
  async #trustedChecksums(kind: ChecksumKind): Promise<ChecksumObject[]> {
    const listed = await keptAliveApi().list<ChecksumObject>(resourcePath(CHECKSUMS[kind]));
    const trusted = listed.filter(o => isTrustedPublication(o, this.#publishers));
    const untrusted = listed.filter(o => !trusted.includes(o));
    for (const object of untrusted) await this.#ignore(kind, object, false);
    return trusted;
  }

  /**
   * A checksum object outside the publisher namespaces: never trusted. Said once per object (an
   * Event on it, a log line) and counted, so whoever made it learns why it changes nothing.
   */
  async #ignore(kind: ChecksumKind, object: ChecksumObject, deleted: boolean): Promise<void> {
    const key = `${kind} ${objectKey(object)}`;
    if (deleted) this.#ignored.delete(key);
    else if (this.#ignored.has(key)) return;
    else this.#ignored.add(key);
    guardMetrics.untrustedChecksums.set(this.#ignored.size);
    if (deleted) return;
    const publishers = [...this.#publishers].join(", ");
    const message = `Ignored: checksum objects are trusted only in the publisher namespaces (${publishers}; BULWARK_CHECKSUM_PUBLISHER_NAMESPACES).`;
    Log.warn(
      { ns: object.metadata?.namespace, name: object.metadata?.name, kind },
      "untrusted checksum object ignored",
    );
    const involved = {
      ...object,
      apiVersion: `${CHECKSUM_GROUP}/${CHECKSUM_VERSION}`,
      kind: checksumKinds[kind].kind,
    };
    await recordEvent(
      involved,
      { type: "Warning", reason: "UntrustedPublisher", message },
      COMPONENT,
    );
  }

  /** When the previous checksum object stops counting, statuses and metrics change: write them then. */
  #recheckWhenWindowCloses(): void {
    for (const kind of KINDS) {
      const closesAt = this.state.window(kind).closesAtMs;
      if (closesAt === undefined) continue;
      clearTimeout(this.#windowTimers[kind]);
      const delayMs = Math.max(0, closesAt - Date.now()) + 10;
      this.#windowTimers[kind] = setTimeout(() => this.#markDirty(kind), delayMs).unref();
    }
  }

  #markDirty(kind: ChecksumKind): void {
    this.#dirty.add(kind);
    if (this.#primed) this.#schedule(this.#options.debounceMs);
  }

  #schedule(delayMs: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#flush(), delayMs);
  }

  /** Doubling from 500 ms to maxRetryMs, without jitter: one writer (the watcher), no herd. */
  #retryBackoff(): Backoff {
    const capMs = this.#options.maxRetryMs;
    return { durationMs: 500, factor: 2, jitter: 0, steps: UNBOUNDED_STEPS, capMs };
  }

  async #flush(): Promise<void> {
    if (this.#running) return this.#schedule(this.#options.debounceMs);
    this.#running = true;
    const kinds = [...this.#dirty];
    this.#dirty.clear();
    try {
      for (const kind of kinds) await this.#writeStatuses(kind);
      this.#failures = 0;
      this.#recheckWhenWindowCloses();
    } catch (error) {
      for (const kind of kinds) this.#dirty.add(kind);
      const retryMs = backoffWait(this.#retryBackoff(), ++this.#failures, Math.random);
      Log.warn({ err: String(error), retryMs }, "could not write checksum status; retrying");
      this.#schedule(retryMs);
    } finally {
      this.#running = false;
    }
  }

  #setConsistencyGauges(
    kind: ChecksumKind,
    mode: GuardMode,
    consistent: boolean | undefined,
  ): void {
    if (consistent === undefined) guardMetrics.consistent.remove({ kind });
    else guardMetrics.consistent.set({ kind }, consistent ? 1 : 0);
    guardMetrics.wouldRefuse.set({ kind }, mode === "observe" && consistent !== true ? 1 : 0);
  }

  async #writeStatuses(kind: ChecksumKind): Promise<void> {
    const stop = guardMetrics.verifyDuration.startTimer({ kind });
    const observations = this.state.observations(kind);
    const consistent = this.state.anyConsistent(kind);
    stop();
    const mode = this.#modes[kind];
    this.#setConsistencyGauges(kind, mode, consistent);

    for (const { object, observation } of observations) {
      const key = objectKey(object);
      const previous = object.status;
      const status = desiredStatus(
        { ...observation, mode },
        object.metadata?.generation,
        previous,
        new Date(),
      );
      const serialized = JSON.stringify(status);
      if (this.#written.get(key) === serialized) continue;
      const { namespace, name = "" } = object.metadata ?? {};
      await keptAliveApi().mergePatch(
        `${resourcePath(CHECKSUMS[kind], { namespace, name })}/status`,
        { status },
      );
      this.#written.set(key, serialized);
      Log.debug(
        {
          ns: object.metadata?.namespace,
          name: object.metadata?.name,
          kind,
          reason: status.conditions?.[0]?.reason,
        },
        "checksum status written",
      );
      object.status = status;
      await this.#announce(kind, object, { previous, status });
    }
  }

  async #announce(
    kind: ChecksumKind,
    object: ChecksumObject,
    change: { previous: ChecksumStatus | undefined; status: ChecksumStatus },
  ): Promise<void> {
    const was = isConsistent(change.previous);
    const now = isConsistent(change.status);
    if (was === now) return;
    const condition = change.status.conditions?.[0];
    const message = condition?.message ?? "";
    // List items may lack apiVersion/kind; the Event must name them.
    const involved = {
      ...object,
      apiVersion: `${CHECKSUM_GROUP}/${CHECKSUM_VERSION}`,
      kind: checksumKinds[kind].kind,
    };
    const log = {
      ns: object.metadata?.namespace,
      name: object.metadata?.name,
      kind: involved.kind,
      reason: condition?.reason,
    };
    if (now) {
      Log.info(log, "checksum consistent");
      await recordEvent(
        involved,
        { type: "Normal", reason: "ChecksumMatched", message },
        COMPONENT,
      );
    } else {
      Log.warn({ ...log, detail: message }, "checksum mismatch");
      guardMetrics.mismatches.inc({ kind });
      await recordEvent(
        involved,
        { type: "Warning", reason: "ChecksumMismatch", message },
        COMPONENT,
      );
    }
  }
}
