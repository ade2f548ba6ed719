// The gateway's control side: keeps the checksum guard current from the watched objects,
// composes the view this pod should serve (guard, rollout, empty-set protection), hands it to
// the data plane when it differs from what is served, and saves it as the last good view.
// A refused update leaves the last good view serving and is logged, counted and shown in
// /healthz. A restart first serves the view saved on disk, so an API server outage at start-up
// changes nothing for clients.
import type {
  V1EndpointSlice,
  V1Ingress,
  V1IngressClass,
  V1Secret,
  V1Service,
} from "@kubernetes/client-node";
import { ConsistencyState } from "../core/checksum/consistency-state";
import type { ChecksumObject } from "../core/checksum/crd";
import type { Ingress, Secret } from "../core/ingress/types";
import type { GuardMode, KeysLocation } from "../core/checksum";
import { isDefaultClass } from "../core/ingress/class";
import { INGRESS_CLASS, INGRESS_CONTROLLER } from "../core/names";
import type { GatewayMetrics } from "./admin/metrics";
import type { DataPlane } from "./data-plane";
import {
  composeView,
  sameServed,
  type ComposeInput,
  type Composition,
  GUARDED_KINDS,
  type GuardState,
  type GuardedKind,
  type KindOutcome,
  type Refusal,
  type ServedState,
} from "./selection/compose";
import type { Change, ResourceKind } from "./source/cache";
import type { KubeObject } from "../kube/reflector";
import type { ApiServerStatus, Source } from "./source/source";
import { CoalescingWriter, readLastGood } from "./state/last-good";
import { ServingVerdicts } from "./selection/verdicts";

export type LogFn = (
  level: "debug" | "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface ControllerOptions {
  podName: string;
  ordinal: number;
  stateDir: string;
  /** The checksum guard per kind: off, observe (verify and report only) or enforce. */
  checksum: Record<GuardedKind, GuardMode>;
  /** Namespaces whose Ingresses and Secrets are neither served nor counted (the webhooks skip them). */
  excludedNamespaces: ReadonlySet<string>;
  /** Tengine-Ingress's ingress-referrer allow-list. */
  ingressReferrers: ReadonlySet<string>;
  /** How long the checksum object before the newest still counts. */
  checksumGraceMs?: number;
  /** Signed attestations: required or not, and the ConfigMap of trusted keys. */
  signatures?: { required: boolean; keys: KeysLocation };
  dataPlane: Pick<DataPlane, "apply" | "status">;
  metrics: GatewayMetrics;
  log: LogFn;
  /** Quiet time that gathers a burst of changes into one view. */
  debounceMs?: number;
}

interface Served {
  version: number;
  goodAt: string;
  state: ServedState;
  /** Where the served view came from: the API server, or disk at start-up. */
  from: "api" | "disk";
  problems: string[];
}

export interface GuardReport {
  mode: GuardMode;
  /** The verdict on the latest objects, whatever the mode does with it ("off" when the mode is). */
  state: GuardState;
  /** In observe mode, what enforce would refuse the latest objects for; undefined when nothing. */
  wouldRefuse?: Refusal;
  /** The latest objects are served (after rollout); false while the last good ones serve. */
  accepted: boolean;
  refusal?: string;
  since: string;
  candidates: number;
  refusedUpdates: number;
  /** The newest checksum objects and how the cluster differs from them (on a mismatch). */
  checksums?: unknown[];
  /** Checksum objects ignored for a missing or wrong signature, and why (capped). */
  ignored?: { name: string; reason: string; message: string }[];
}

const DIRTY_OF: Partial<Record<ResourceKind, GuardedKind>> = {
  ingress: "ingress",
  ingressChecksum: "ingress",
  secret: "secret",
  secretChecksum: "secret",
};
const MAX_LISTED = 20;

export class GatewayController {
  readonly guard: ConsistencyState;
  readonly #options: ControllerOptions;
  readonly #writer: CoalescingWriter;
  #source: Source | undefined;
  #served: Served | undefined;
  #version = 0;
  #dirty = new Set<GuardedKind>();
  #timer: NodeJS.Timeout | undefined;
  #windowTimer: NodeJS.Timeout | undefined;
  #firstChangeAt: number | undefined;
  #flushing: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #last: Composition | undefined;
  readonly #reports: Record<GuardedKind, GuardReport>;
  readonly #verdicts = new ServingVerdicts();

  constructor(options: ControllerOptions) {
    this.#options = options;
    this.guard = new ConsistencyState(
      {
        classIsDefault: false,
        excludedNamespaces: options.excludedNamespaces,
        ingressReferrers: options.ingressReferrers,
      },
      options.checksumGraceMs,
      // Required, nothing verifies until the keys are listed: fail closed.
      { required: options.signatures?.required ?? false, keys: new Map() },
    );
    this.#writer = new CoalescingWriter(options.stateDir, error =>
      options.log("error", "could not save the last good view", {
        err: String(error),
        dir: options.stateDir,
      }),
    );
    const now = new Date().toISOString();
    const report = (kind: GuardedKind): GuardReport => ({
      mode: options.checksum[kind],
      state: options.checksum[kind] === "off" ? "off" : "no-checksum",
      accepted: false,
      since: now,
      candidates: 0,
      refusedUpdates: 0,
    });
    this.#reports = { ingress: report("ingress"), secret: report("secret") };
  }

  /** Serves the view saved on disk, if any; a damaged file is logged and ignored. */
  async restore(): Promise<void> {
    const { stateDir, log } = this.#options;
    try {
      const saved = await readLastGood(stateDir);
      if (!saved) {
        log("info", "no saved view: not ready until the API server gives a good one", {
          dir: stateDir,
        });
        return;
      }
      await this.#serve(saved.state, {
        version: saved.version,
        goodAt: saved.goodAt,
        from: "disk",
      });
      log("info", "serving the last good view from disk", {
        version: saved.version,
        goodAt: saved.goodAt,
      });
    } catch (error) {
      log("error", "could not restore the last good view", { err: String(error), dir: stateDir });
    }
  }

  attach(source: Source): void {
    this.#source = source;
  }

  onChange(change: Change): void {
    if (change.kind === "ingressClass") this.#rescope();
    if (change.kind === "checksumKeys") this.#takeKeys(change.object);
    this.#observe(change);
    const guarded = DIRTY_OF[change.kind];
    if (guarded) this.#dirty.add(guarded);
    this.#schedule();
  }

  onListed(): void {
    this.#schedule();
  }

  ready(): boolean {
    return this.#served !== undefined;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#windowTimer);
    await this.#flushing;
    await this.#writer.flush();
  }

  #observe({ kind, key, object }: Change): void {
    const guarded = kind === "ingress" || kind === "secret" ? kind : undefined;
    // With the feature off for a kind its objects are not hashed at all (content mode hashes
    // every object's canonical JSON: seconds of CPU and tens of MB at 100k objects).
    if (guarded && this.#options.checksum[guarded] === "off") return;
    if (guarded) {
      if (object) this.guard.observeObject(guarded, object as Ingress | Secret);
      else this.guard.forgetObject(guarded, key);
      return;
    }
    const checksumKind =
      kind === "ingressChecksum" ? "ingress" : kind === "secretChecksum" ? "secret" : undefined;
    if (!checksumKind) return;
    if (object) this.guard.observeChecksum(checksumKind, object as ChecksumObject);
    else this.guard.forgetChecksum(checksumKind, key);
  }

  /**
   * The trusted keys changed (a rotation, or the ConfigMap is gone: then none). A ConfigMap with
   * a bad entry is not half-applied: the keys before it stay, and the error is logged.
   */
  #takeKeys(object: KubeObject | undefined): void {
    const signatures = this.#options.signatures;
    if (!signatures?.required) return;
    const { namespace, name } = signatures.keys;
    const data = (object as { data?: Record<string, string> } | undefined)?.data;
    const taken = this.guard.takeTrustedKeys(data, signatures.keys);
    if (!taken.ok) {
      this.#options.log("error", "trusted checksum keys not taken; the previous ones stay", {
        namespace,
        name,
        errors: taken.errors.map(e => `${e.field} ${e.message}`),
      });
      return;
    }
    this.#options.log("info", "trusted checksum keys", { namespace, name, keyIds: taken.value });
    for (const kind of GUARDED_KINDS) this.#dirty.add(kind);
  }

  /** The previous checksum object stops counting at a set time: compose again then. */
  #recheckWhenWindowCloses(): void {
    const closes = GUARDED_KINDS.map(kind => this.guard.window(kind).closesAtMs).filter(
      (at): at is number => at !== undefined,
    );
    if (closes.length === 0) return;
    const delay = Math.max(0, Math.min(...closes) - Date.now()) + 10;
    clearTimeout(this.#windowTimer);
    this.#windowTimer = setTimeout(() => {
      for (const kind of GUARDED_KINDS) this.#dirty.add(kind);
      this.#schedule();
    }, delay);
    this.#windowTimer.unref();
  }

  /** The scope from the cached IngressClass; a change re-decides which objects count. */
  #rescope(): void {
    const source = this.#source;
    if (!source) return;
    const ingressClass = source.cache.map("ingressClass").get(INGRESS_CLASS) as
      | V1IngressClass
      | undefined;
    const scope = { ...this.guard.scope, classIsDefault: isDefaultClass(ingressClass) };
    for (const kind of this.guard.setScope(scope)) this.#dirty.add(kind);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#firstChangeAt ??= performance.now();
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, this.#options.debounceMs ?? 10);
  }

  #flush(): Promise<void> {
    if (this.#flushing) {
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = this.#compose()
      .catch(error => {
        this.#options.log("error", "could not apply the view; retrying", { err: String(error) });
        setTimeout(() => this.#schedule(), 1000).unref();
      })
      .finally(() => {
        this.#flushing = undefined;
        if (this.#again) {
          this.#again = false;
          this.#schedule();
        }
      });
    return this.#flushing;
  }

  #composable(source: Source): boolean {
    const needed: ResourceKind[] = [
      "ingress",
      "secret",
      "ingressClass",
      "ingressChecksum",
      "secretChecksum",
      "checksumKeys",
    ];
    return needed.every(kind => source.kindSynced(kind));
  }

  /** The verdict on the latest objects of the kind, in observe mode as in enforce. */
  #guardState(kind: GuardedKind): GuardState {
    if (this.#options.checksum[kind] === "off") return "off";
    const consistent = this.guard.anyConsistent(kind);
    if (consistent === undefined) return "no-checksum";
    return consistent ? "matched" : "mismatch";
  }

  /** What composition acts on: the verdict when enforcing, "off" otherwise. */
  #enforced(kind: GuardedKind): GuardState {
    return this.#options.checksum[kind] === "enforce" ? this.#guardState(kind) : "off";
  }

  #input(source: Source): ComposeInput {
    const cache = source.cache;
    const ingressClass = cache.map("ingressClass").get(INGRESS_CLASS) as V1IngressClass | undefined;
    return {
      ordinal: this.#options.ordinal,
      ingresses: cache.map("ingress").values() as Iterable<V1Ingress>,
      secrets: cache.map("secret") as ReadonlyMap<string, V1Secret>,
      authSecrets: source.kindSynced("authSecret")
        ? (cache.map("authSecret") as ReadonlyMap<string, V1Secret>)
        : undefined,
      endpointSlices: source.kindSynced("endpointSlice")
        ? (cache.map("endpointSlice").values() as Iterable<V1EndpointSlice>)
        : undefined,
      services: source.kindSynced("service")
        ? (cache.map("service").values() as Iterable<V1Service>)
        : undefined,
      classClaimed: ingressClass?.spec?.controller === INGRESS_CONTROLLER,
      scope: this.guard.scope,
      guard: { ingress: this.#enforced("ingress"), secret: this.#enforced("secret") },
      previous: this.#served?.state,
      verdicts: this.#verdicts,
    };
  }

  async #compose(): Promise<void> {
    const source = this.#source;
    if (!source || this.#stopped || !this.#composable(source)) return;
    this.#rescope();
    const started = this.#firstChangeAt ?? performance.now();
    this.#firstChangeAt = undefined;
    const dirty = this.#dirty;
    this.#dirty = new Set();
    const composition = composeView(this.#input(source));
    this.#recheckWhenWindowCloses();
    this.#last = composition;
    for (const kind of GUARDED_KINDS) this.#record(kind, composition[kind], dirty.has(kind));
    const state = composition.state;
    if (!state) return;
    if (this.#served && sameServed(state, this.#served.state)) {
      this.#served.from = "api";
      return;
    }
    await this.#serve(
      state,
      { version: this.#version + 1, goodAt: new Date().toISOString(), from: "api" },
      composition.problems,
    );
    this.#options.metrics.applyDuration.observe((performance.now() - started) / 1000);
  }

  async #serve(
    state: ServedState,
    meta: { version: number; goodAt: string; from: Served["from"] },
    problems: string[] = [],
  ): Promise<void> {
    const { dataPlane, metrics, log, podName } = this.#options;
    const applied = await dataPlane.apply({ version: meta.version, ...state.view });
    this.#version = Math.max(this.#version, meta.version);
    this.#served = {
      ...meta,
      state,
      problems: [...problems, ...applied.problems],
    };
    metrics.viewVersion.set(meta.version);
    metrics.ingressesRefused.set(Object.keys(state.view.refused ?? {}).length);
    metrics.viewsApplied.inc();
    metrics.lastGoodTimestamp.set(Date.parse(meta.goodAt) / 1000);
    if (meta.from === "api")
      this.#writer.save({ version: meta.version, goodAt: meta.goodAt, podName, state });
    log("info", "serving view", {
      version: meta.version,
      from: meta.from,
      ingresses: state.view.ingresses.length,
      refused: Object.keys(state.view.refused ?? {}).length,
      tlsPairs: state.view.tlsPairs.length,
      endpointSlices: state.view.endpointSlices.length,
      services: state.view.services?.length ?? 0,
      problems: this.#served.problems.slice(0, MAX_LISTED),
    });
  }

  #record(kind: GuardedKind, outcome: KindOutcome, changed: boolean): void {
    const { metrics } = this.#options;
    const report = this.#reports[kind];
    const state = this.#guardState(kind);
    const wouldRefuse =
      report.mode === "observe" && (state === "mismatch" || state === "no-checksum")
        ? state
        : undefined;
    if (report.state !== state || report.accepted !== outcome.accepted)
      report.since = new Date().toISOString();
    Object.assign(report, {
      state,
      wouldRefuse,
      accepted: outcome.accepted,
      refusal: outcome.refusal,
      candidates: outcome.candidates,
    });
    metrics.checksumMismatch.set({ kind }, state === "mismatch" ? 1 : 0);
    metrics.checksumWouldRefuse.set({ kind }, wouldRefuse === undefined ? 0 : 1);
    metrics.rolloutHeld.set({ kind }, Object.keys(outcome.held).length);
    report.checksums = state === "mismatch" ? this.#mismatchDetail(kind) : undefined;
    const ignored = this.guard.ignored(kind).slice(0, MAX_LISTED);
    report.ignored = ignored.length > 0 ? ignored : undefined;
    if (changed) this.#countChange(kind, outcome);
  }

  /** Counters and log lines for a changed kind: once per change, not per recomposition. */
  #countChange(kind: GuardedKind, outcome: KindOutcome): void {
    const { metrics, log } = this.#options;
    const report = this.#reports[kind];
    const { state, wouldRefuse } = report;
    if (state === "matched") metrics.checksumSuccesses.inc({ kind });
    if (wouldRefuse !== undefined) {
      log("warn", "observe mode: enforcing would refuse this update; it is served", {
        kind,
        reason: wouldRefuse,
        candidates: outcome.candidates,
        checksums: report.checksums,
      });
    }
    if (outcome.accepted) return;
    report.refusedUpdates += 1;
    if (outcome.refusal === "mismatch") metrics.checksumMismatches.inc({ kind });
    if (outcome.refusal === "empty") metrics.emptyRefusals.inc({ kind });
    log("warn", "update refused; the last good view keeps serving", {
      kind,
      reason: outcome.refusal,
      candidates: outcome.candidates,
      checksums: report.checksums,
    });
  }

  #mismatchDetail(kind: GuardedKind): unknown[] {
    return this.guard
      .observations(kind)
      .slice(0, 5)
      .map(({ object, observation: o }) => ({
        name: `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`,
        publishedChecksum: o.publishedChecksum,
        observedChecksum: o.observedChecksum,
        objects: o.objectCount,
        missingCount: o.missingCount,
        unexpectedCount: o.unexpectedCount,
        missing: o.missing.slice(0, 5),
        unexpected: o.unexpected.slice(0, 5),
        invalidSpec: o.invalidSpec,
      }));
  }

  /** The detail /healthz shows. */
  health(): Record<string, unknown> {
    const served = this.#served;
    const api: ApiServerStatus | undefined = this.#source?.status();
    const held = (kind: GuardedKind): Record<string, string> =>
      Object.fromEntries(Object.entries(this.#last?.[kind].held ?? {}).slice(0, MAX_LISTED));
    return {
      pod: this.#options.podName,
      ordinal: this.#options.ordinal,
      ready: this.ready(),
      view: served && {
        version: served.version,
        from: served.from,
        goodAt: served.goodAt,
        ingresses: served.state.view.ingresses.length,
        tlsPairs: served.state.view.tlsPairs.length,
        endpointSlices: served.state.view.endpointSlices.length,
        services: served.state.view.services?.length ?? 0,
        problems: served.problems.slice(0, MAX_LISTED),
      },
      guard: this.#reports,
      rollout: {
        ordinal: this.#options.ordinal,
        held: { ingress: held("ingress"), secret: held("secret") },
      },
      apiServer: api,
      dataPlane: this.#options.dataPlane.status(),
    };
  }
}
