// The grant service: for a pod whose init client called, make sure its permissions get granted.
// Level-triggered and idempotent: `ensure(pod)` may be called on every call and poll, by any
// replica; it starts an attempt only when the pod is not granted, no other replica holds its
// claim, its breaker is closed and its backoff has expired. An attempt claims the pod, records
// what it is about to grant in the ledger (so a deletion mid-way revokes it), runs one job per permission
// through the provider's limiter and breaker, and ends granted (grant record, status, Event) or
// failed (one strike in the breaker ConfigMap, the backoff stepped, status, Event).
import type { V1Pod } from "@kubernetes/client-node";
import {
  PERMISSION_CLAIM_ANNOTATION,
  PERMISSION_GRANT_ANNOTATION,
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
} from "../../core/names";
import { isBreakerOpen, serializeGrantRecord, type GrantRecord } from "../../core/permission";
import { withGranted, withIntent } from "../../core/permission/ledger";
import type { BreakerStore } from "../../kube/breaker-store";
import { CatalogError, type Catalog } from "../providers/catalog";
import { otherHolder } from "../../core/permission/claim";
import { ClaimedPod, ClaimLostError } from "../pods/claimed-pod";
import { recordPodEvent, type EventNote } from "../pods/events";
import { runGrantJob, type Clock, type JobOutcome, type JobProgress, type JobTiming } from "./job";
import { isConflict } from "../../kube/api-errors";
import { patchPodAnnotations, type Kube } from "../kube";
import type { GrantLedger } from "./ledger";
import { errorText, type Logger } from "../../kube/log";
import type { Metrics } from "../metrics";
import type { PodCache } from "../pods/cache";
import {
  afterFailure,
  afterSuccess,
  gate,
  isEmptyEntry,
  type Gate,
  type PodEntry,
} from "../../core/permission/pod-retry";
import {
  applyOutcome,
  applyProgress,
  CMDB_PERMISSION,
  pendingProgress,
  planGrants,
  runningPhase,
  startingStatus,
  type CmdbSettings,
  type Planned,
} from "./plan";
import type { Revoker } from "./revoker";
import type { Settings } from "../settings";
import {
  failureSummary,
  isGrantedTo,
  parseGrantStatus,
  serializeGrantStatus,
  type GrantStatus,
} from "../../core/permission/grant-status";

export interface GrantServiceDeps {
  kube: Kube;
  settings: Pick<
    Settings,
    | "replica"
    | "backoff"
    | "breakerThreshold"
    | "grantTimeoutMs"
    | "pollIntervalMs"
    | "retryIntervalMs"
    | "retryMaxIntervalMs"
    | "claimTtlMs"
  > & { cmdb: CmdbSettings | undefined };
  catalog: Catalog;
  store: BreakerStore;
  ledger: GrantLedger;
  pods: PodCache;
  revoker: Revoker;
  log: Logger;
  metrics: Metrics;
  clock: Clock;
  random: () => number;
}

interface PodRef {
  namespace: string;
  name: string;
  uid: string;
  ip: string;
  group: string;
}

function podRef(pod: V1Pod): PodRef | undefined {
  const { namespace, name, uid, annotations } = pod.metadata ?? {};
  const ip = pod.status?.podIP;
  const group = annotations?.[PERMISSION_GROUP_ANNOTATION];
  if (!namespace || !name || !uid || !ip || !group) return undefined;
  return { namespace, name, uid, ip, group };
}

/** What a failed attempt says on the pod's status and in its Event. */
function failureText(
  entry: PodEntry,
  reason: string,
  context: { attempt: number; threshold: number; pod: { namespace: string; name: string } },
): { status: string; event: string } {
  const { failures } = entry.breaker;
  const retryAt = entry.retry?.nextAttemptAt;
  const { namespace, name } = context.pod;
  if (isBreakerOpen(entry.breaker)) {
    const status = `breaker open after ${failures} failed attempts (last: ${reason}); one more try at ${retryAt ?? "a reset"}, or now with: bulwark permission reset ${name} -n ${namespace}`;
    return { status, event: status };
  }
  const status = `attempt ${context.attempt} failed (${failures} of ${context.threshold}): ${reason}`;
  return { status, event: retryAt ? `${status}; next attempt at ${retryAt}` : status };
}

interface GateReport {
  pod: V1Pod;
  ref: PodRef;
  status: GrantStatus | undefined;
  entry: PodEntry;
  decision: Exclude<Gate, { allow: true }>;
}

/** The status that says the pod is blocked or backing off; undefined when it already says so. */
function gateStatus(
  { ref, status, entry, decision }: GateReport,
  now: Date,
): GrantStatus | undefined {
  const phase = decision.blocked ? "blocked" : "backoff";
  const retryAt = decision.retryAt?.toISOString();
  if (status?.phase === phase && status.uid === ref.uid && status.retryAt === retryAt) {
    return undefined;
  }
  const next: GrantStatus = {
    phase,
    uid: ref.uid,
    ip: ref.ip,
    rev: (status?.rev ?? 0) + 1,
    attempt: entry.breaker.failures,
    failures: entry.breaker.failures,
    reason: decision.reason,
    permissions: status?.uid === ref.uid ? status.permissions : [],
    updatedAt: now.toISOString(),
  };
  if (retryAt) next.retryAt = retryAt;
  return next;
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

export class GrantService {
  readonly #running = new Map<string, Running>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #firstCall = new Map<string, number>();
  #stopped = false;

  constructor(private readonly deps: GrantServiceDeps) {}

  get #holder(): string {
    return this.deps.settings.replica;
  }

  /** Now, by the injected clock: every time the service reads or writes is on it. */
  #now(): Date {
    return new Date(this.deps.clock.now());
  }

  /** Whether this replica runs an attempt for the pod now. */
  isRunning(uid: string): boolean {
    return this.#running.has(uid);
  }

  /** Starts an attempt for the pod if one is due; never throws (problems are logged). */
  async ensure(pod: V1Pod): Promise<void> {
    const due = this.#due(pod);
    if (!due) return;
    const { ref, status } = due;
    try {
      const entry = await this.deps.store.read(ref.uid);
      const decision = gate(entry, this.#now());
      if (!decision.allow) {
        await this.#reportGate({ pod, ref, status, entry, decision });
        return;
      }
      if (this.#running.has(ref.uid)) return;
      this.#start(pod, ref, entry, status);
    } catch (error) {
      this.deps.log.warn("could not decide on a grant attempt; the next call retries", {
        ns: ref.namespace,
        name: ref.name,
        err: errorText(error),
      });
    }
  }

  /** The pod and its status when an attempt may be due: not granted, not worked on by anyone. */
  #due(pod: V1Pod): { ref: PodRef; status: GrantStatus | undefined } | undefined {
    const ref = podRef(pod);
    if (!ref || this.#stopped || pod.metadata?.deletionTimestamp) return undefined;
    if (!this.#firstCall.has(ref.uid)) this.#firstCall.set(ref.uid, this.deps.clock.now());
    if (this.#running.has(ref.uid)) return undefined;
    const annotations = pod.metadata?.annotations ?? {};
    const status = parseGrantStatus(annotations[PERMISSION_STATUS_ANNOTATION]);
    if (isGrantedTo(status, ref.uid, ref.ip)) return undefined;
    if (otherHolder(annotations[PERMISSION_CLAIM_ANNOTATION], this.#holder, this.#now())) {
      return undefined;
    }
    return { ref, status };
  }

  /** Stops this replica's attempt for the pod (a revocation is coming) and waits for it to end. */
  async abort(uid: string): Promise<void> {
    const running = this.#running.get(uid);
    this.#clearTimer(uid);
    this.#firstCall.delete(uid);
    if (!running) return;
    running.abort.abort();
    await running.done;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const uid of [...this.#timers.keys()]) this.#clearTimer(uid);
    await Promise.all([...this.#running.values()].map(r => (r.abort.abort(), r.done)));
  }

  /** Blocked or backing off: say so on the pod (once), and come back when the backoff ends. */
  async #reportGate(report: GateReport): Promise<void> {
    const { pod, ref, decision } = report;
    if (decision.retryAt) this.#retryAt(ref, decision.retryAt.getTime());
    const next = gateStatus(report, this.#now());
    if (!next) return;
    try {
      const updated = await patchPodAnnotations(
        this.deps.kube,
        {
          namespace: ref.namespace,
          name: ref.name,
          resourceVersion: pod.metadata?.resourceVersion,
        },
        { [PERMISSION_STATUS_ANNOTATION]: serializeGrantStatus(next) },
      );
      this.deps.pods.put(updated);
    } catch (error) {
      // Someone wrote the pod since it was read: the next call decides again on a fresh copy.
      if (!isConflict(error)) throw error;
    }
  }

  #start(pod: V1Pod, ref: PodRef, entry: PodEntry, status: GrantStatus | undefined): void {
    const abort = new AbortController();
    this.#clearTimer(ref.uid);
    const unsubscribe = this.deps.pods.onChange(ref.namespace, ref.name, () => {
      const current = this.deps.pods.get(ref.namespace, ref.name);
      if (!current || current.metadata?.deletionTimestamp || current.metadata?.uid !== ref.uid) {
        abort.abort();
      }
    });
    this.deps.metrics.running.inc();
    const done = new Attempt(this.deps, { pod, ref, entry, status }, abort)
      .run()
      .then(outcome => this.#afterAttempt(ref, outcome))
      .catch(error => {
        this.deps.metrics.attempts.inc({ outcome: "error" });
        const lost = error instanceof ClaimLostError;
        this.deps.log[lost ? "info" : "warn"](
          lost ? "lost the claim; another replica took over" : "grant attempt failed",
          {
            ns: ref.namespace,
            name: ref.name,
            err: errorText(error),
          },
        );
      })
      .finally(() => {
        unsubscribe();
        this.deps.metrics.running.dec();
        this.#running.delete(ref.uid);
      });
    this.#running.set(ref.uid, { abort, done });
  }

  #afterAttempt(ref: PodRef, outcome: AttemptOutcome): void {
    this.deps.metrics.attempts.inc({ outcome: outcome.kind });
    if (outcome.kind === "granted") {
      const first = this.#firstCall.get(ref.uid);
      if (first !== undefined) {
        this.deps.metrics.timeToGranted.observe((this.deps.clock.now() - first) / 1000);
      }
      this.#firstCall.delete(ref.uid);
    }
    // Blocked too: the one probe through the open breaker runs when the backoff ends.
    if ((outcome.kind === "failed" || outcome.kind === "blocked") && outcome.retryAt !== undefined)
      this.#retryAt(ref, outcome.retryAt);
  }

  /** Comes back to the pod when its backoff ends (the init client's polls would too). */
  #retryAt(ref: PodRef, at: number): void {
    if (this.#stopped || this.#timers.has(ref.uid)) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(ref.uid);
        const pod = this.deps.pods.get(ref.namespace, ref.name);
        if (pod?.metadata?.uid === ref.uid) void this.ensure(pod);
      },
      Math.max(0, at - this.deps.clock.now()) + 10,
    );
    timer.unref();
    this.#timers.set(ref.uid, timer);
  }

  #clearTimer(uid: string): void {
    const timer = this.#timers.get(uid);
    if (timer) clearTimeout(timer);
    this.#timers.delete(uid);
  }
}

type AttemptOutcome =
  | { kind: "granted" }
  | { kind: "failed"; retryAt?: number }
  | { kind: "blocked"; retryAt?: number }
  | { kind: "aborted" };

interface AttemptInput {
  pod: V1Pod;
  ref: PodRef;
  entry: PodEntry;
  status: GrantStatus | undefined;
}

/** One attempt for one pod, from claim to release. */
class Attempt {
  #status: GrantStatus;
  #claimed: ClaimedPod | undefined;
  readonly #waiting = new Set<number>();

  constructor(
    private readonly deps: GrantServiceDeps,
    private readonly input: AttemptInput,
    private readonly abort: AbortController,
  ) {
    const { ref, entry, status } = input;
    const base = {
      uid: ref.uid,
      ip: ref.ip,
      attempt: entry.breaker.failures + 1,
      failures: entry.breaker.failures,
    };
    this.#status = startingStatus(base, status?.rev ?? 0, this.#now());
  }

  get #ref(): PodRef {
    return this.input.ref;
  }

  #now(): Date {
    return new Date(this.deps.clock.now());
  }

  async run(): Promise<AttemptOutcome> {
    const { kube, pods, settings } = this.deps;
    const context = { kube, pods, holder: settings.replica, ttlMs: settings.claimTtlMs };
    this.#claimed = await ClaimedPod.acquire(
      context,
      this.input.pod,
      this.#statusAnnotation(),
      () => this.abort.abort(),
    );
    if (!this.#claimed) return { kind: "aborted" };
    const claimed = this.#claimed;
    try {
      return await this.#whileClaimed(claimed);
    } catch (error) {
      if (error instanceof ClaimLostError || this.abort.signal.aborted) throw error;
      // Any other throw after the claim (the API, the breaker ConfigMap, a revoke) is a failed
      // attempt: counted toward backoff and breaker, and the claim released.
      return await this.#fail(errorText(error)).catch(async (failed: unknown) => {
        await claimed.release(this.#statusAnnotation()).catch(() => {});
        throw failed;
      });
    } finally {
      claimed.stop();
    }
  }

  async #whileClaimed(claimed: ClaimedPod): Promise<AttemptOutcome> {
    let planned: Planned[];
    try {
      planned = await this.#plan();
    } catch (error) {
      if (!(error instanceof CatalogError)) throw error;
      return this.#fail(error.message);
    }
    await this.#revokeOldIps();
    // In the ledger before any provider is called: a deletion from here on revokes it.
    await this.deps.ledger.update(this.#ledgerPod(), spec =>
      withIntent(spec, this.#ledgerGrants(planned)),
    );
    this.#status.permissions = pendingProgress(planned);
    await claimed.update({
      ...this.#statusAnnotation(),
      [PERMISSION_GRANT_ANNOTATION]: serializeGrantRecord(this.#record(planned)),
    });
    const outcomes = await this.#runJobs(planned);
    if (this.abort.signal.aborted || outcomes.some(o => o.outcome === "aborted")) {
      await claimed.release({}).catch(() => {});
      return { kind: "aborted" };
    }
    if (outcomes.every(o => o.outcome === "granted")) return this.#succeed(planned);
    return this.#fail(failureSummary(this.#status.permissions));
  }

  async #plan(): Promise<Planned[]> {
    const group = await this.deps.catalog.group(this.#ref.namespace, this.#ref.group);
    const { planned, problem } = planGrants(group, this.deps.settings.cmdb);
    if (problem) throw new CatalogError(problem);
    return planned;
  }

  #record(planned: Planned[]): GrantRecord {
    const { uid, ip, group } = this.#ref;
    return { ip, uid, group, permissions: planned, grantedAt: this.#now().toISOString() };
  }

  #ledgerPod() {
    const { namespace, name, uid, group } = this.#ref;
    return { namespace, name, uid, group };
  }

  #ledgerGrants(planned: Planned[]) {
    return planned.map(p => ({ ip: this.#ref.ip, ...p }));
  }

  /** The pod was granted at another IP before (its sandbox was recreated): revoke that first. */
  async #revokeOldIps(): Promise<void> {
    const { namespace, name, uid, ip } = this.#ref;
    const result = await this.deps.revoker.revoke({ namespace, pod: name, uid }, { exceptIp: ip });
    if (result.failed.length > 0) {
      throw new Error(
        `revoking the grants of the pod's old IP ${result.ips.join(", ")} failed: ${result.failed.map(f => f.reason).join("; ")}`,
      );
    }
  }

  #statusAnnotation(): Record<string, string> {
    this.#status.updatedAt = this.#now().toISOString();
    return { [PERMISSION_STATUS_ANNOTATION]: serializeGrantStatus(this.#status) };
  }

  #push(): void {
    this.#status.rev++;
    this.#status.phase = runningPhase(this.#waiting.size);
    void this.#claimed?.update(this.#statusAnnotation()).catch(() => {});
  }

  async #runJobs(planned: Planned[]): Promise<JobOutcome[]> {
    const [first, ...rest] = planned;
    const outcomes: JobOutcome[] = [];
    // The CMDB registration goes first: the pod is known before anything is granted to it.
    const registration = first?.name === CMDB_PERMISSION ? first : undefined;
    if (registration) {
      const outcome = await this.#runJob(registration, 0);
      outcomes.push(outcome);
      if (outcome.outcome !== "granted") return outcomes;
    }
    const jobs = (registration ? rest : planned).map((p, i) =>
      this.#runJob(p, i + (registration ? 1 : 0)),
    );
    return [...outcomes, ...(await Promise.all(jobs))];
  }

  async #runJob(planned: Planned, index: number): Promise<JobOutcome> {
    const { metrics } = this.deps;
    let outcome: JobOutcome;
    try {
      outcome = await this.#grant(planned, index);
    } catch (error) {
      outcome = { outcome: "denied", reason: errorText(error) };
    }
    this.#waiting.delete(index);
    metrics.jobs.inc({ provider: planned.provider, outcome: outcome.outcome });
    const current = this.#status.permissions[index];
    if (current && outcome.outcome !== "aborted") {
      this.#status.permissions[index] = applyOutcome(current, outcome);
      this.#push();
    }
    return outcome;
  }

  /** Waits for a job slot of the provider (saying so on the pod), then runs the job. */
  async #grant(planned: Planned, index: number): Promise<JobOutcome> {
    const { catalog, clock, settings } = this.deps;
    const handle = await catalog.provider(planned.provider);
    if (handle.slots.waiting > 0) {
      this.#progress(index, { state: "pending", reason: `queued for provider ${handle.name}` });
    }
    const release = await handle.slots.acquire(this.abort.signal);
    if (!release) return { outcome: "aborted" };
    try {
      const timing: JobTiming = {
        deadlineMs: settings.grantTimeoutMs,
        pollIntervalMs: settings.pollIntervalMs,
        retryIntervalMs: settings.retryIntervalMs,
        retryMaxIntervalMs: settings.retryMaxIntervalMs,
      };
      const { uid, namespace, name, ip, group } = this.#ref;
      const request = { podUid: uid, namespace, pod: name, ip, group, params: planned.params };
      const options = { timing, clock, signal: this.abort.signal };
      return await runGrantJob(handle, request, options, progress =>
        this.#progress(index, progress),
      );
    } finally {
      release();
    }
  }

  #progress(index: number, progress: JobProgress): void {
    if (progress.state === "waiting") this.#waiting.add(index);
    else this.#waiting.delete(index);
    const current = this.#status.permissions[index];
    if (!current) return;
    const next = applyProgress(current, progress);
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    this.#status.permissions[index] = next;
    this.#push();
  }

  async #succeed(planned: Planned[]): Promise<AttemptOutcome> {
    const { store } = this.deps;
    if (!isEmptyEntry(this.input.entry)) await store.update(this.#ref.uid, afterSuccess);
    await this.deps.ledger.update(this.#ledgerPod(), spec =>
      withGranted(spec, this.#ledgerGrants(planned), this.#now()),
    );
    Object.assign(this.#status, { phase: "granted", failures: 0, rev: this.#status.rev + 1 });
    delete this.#status.retryAt;
    delete this.#status.reason;
    await this.#claimed?.release({
      ...this.#statusAnnotation(),
      [PERMISSION_GRANT_ANNOTATION]: serializeGrantRecord(this.#record(planned)),
    });
    await this.#event({
      type: "Normal",
      reason: "Granted",
      message: `granted ${planned.map(p => p.name).join(", ")} to ${this.#ref.ip}`,
    });
    this.deps.log.info("granted", {
      ns: this.#ref.namespace,
      name: this.#ref.name,
      ip: this.#ref.ip,
    });
    return { kind: "granted" };
  }

  async #fail(reason: string): Promise<AttemptOutcome> {
    const { namespace, name } = this.#ref;
    const entry = await this.#countFailure(reason);
    const blocked = isBreakerOpen(entry.breaker);
    const retryAt = entry.retry?.nextAttemptAt;
    const text = failureText(entry, reason, {
      attempt: this.#status.attempt,
      threshold: this.deps.settings.breakerThreshold,
      pod: this.#ref,
    });
    Object.assign(this.#status, {
      phase: blocked ? "blocked" : "backoff",
      failures: entry.breaker.failures,
      reason: text.status,
      rev: this.#status.rev + 1,
    });
    if (retryAt) this.#status.retryAt = retryAt;
    await this.#claimed?.release(this.#statusAnnotation());
    await this.#event({
      type: "Warning",
      reason: blocked ? "GrantBlocked" : "GrantFailed",
      message: text.event,
    });
    this.deps.log.warn(blocked ? "grant failed; breaker open" : "grant failed; backing off", {
      ns: namespace,
      name,
      reason,
      retryAt,
    });
    const at = retryAt === undefined ? {} : { retryAt: Date.parse(retryAt) };
    return { kind: blocked ? "blocked" : "failed", ...at };
  }

  /** One more strike and the backoff stepped, in the breaker ConfigMap. */
  #countFailure(reason: string): Promise<PodEntry> {
    const { store, settings, random } = this.deps;
    const { namespace, name, ip, uid } = this.#ref;
    return store.update(uid, current =>
      afterFailure(current, {
        error: reason,
        now: this.#now(),
        threshold: settings.breakerThreshold,
        initial: settings.backoff,
        random,
        pod: { namespace, name, ip },
      }),
    );
  }

  async #event(note: EventNote): Promise<void> {
    await recordPodEvent(
      { kube: this.deps.kube, log: this.deps.log, instance: this.deps.settings.replica },
      this.input.pod,
      note,
    );
  }
}
