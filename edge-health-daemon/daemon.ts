// One edge-health daemon's engine: check rounds, receiving signed rows, tallying, writing.
// It owns no sockets and no API client: the caller passes them in (main.ts for the real
// process, hack/bench/edge-health.ts for the 200-node simulation), so the same code runs in both.
import type { VoteTerm } from "../core/edge";
import type { CheckOutcome } from "./score";
import { checkChanges, isNormal } from "./score";
import { Ring, type Member } from "./membership";
import { EdgeMetrics } from "./metrics";
import {
  MAX_KEYS,
  newNonce,
  receivedCheckedAt,
  REJECTION_STATUS,
  rememberNonce,
  ReplayGuard,
  signResult,
  verifyResult,
  type SignedResult,
} from "./signing";
import {
  ResultStore,
  shouldRefresh,
  shouldWrite,
  tally,
  writerOf,
  type Decision,
  type Row,
  type Tally,
} from "./tally";

export interface DaemonLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
}

/** A node's vote as the watch cache has it. */
export interface VoteOnRecord {
  /** The `superedgehealth/node-health` annotation. */
  value?: string;
  /** Its term (core/edge/vote.ts `readTerm`), when the Node has a readable one. */
  term?: VoteTerm;
}

export interface DaemonIo {
  now(): number;
  /** The current group (membership.ts `groupOf` over the watch cache). */
  members(): readonly Member[];
  onRecord(node: string): VoteOnRecord;
  /** Writes the value and its term in one merge patch (core/edge/vote.ts `voteAnnotations`). */
  write(node: string, value: Decision, term: VoteTerm): Promise<void>;
  probe(ip: string): Promise<CheckOutcome[]>;
  send(to: Member, message: SignedResult): Promise<void>;
  log: DaemonLog;
}

export interface DaemonOptions {
  self: string;
  /** The HMAC keys from the Secret or file, newest (the signing one) first. */
  keys: readonly Buffer[];
  /** After a rotation, the keys that left still sign and verify this long. */
  hmacOverlapMs: number;
  /** How far ahead of our clock a sender's timestamp may be. */
  maxClockSkewMs: number;
  /** The check period: a peer not heard from for 1.5 periods is no longer a writer candidate. */
  checkPeriodMs: number;
  scoreLine: number;
  voteTimeoutMs: number;
  messageMaxAgeMs: number;
  maxProbePeers: number;
  writerFallbackPeriods: number;
  /** A written vote is valid for this many check periods (tally.ts `shouldRefresh`). */
  voteTermPeriods: number;
  verifySource: boolean;
}

export interface Reply {
  status: number;
  body: { accepted: boolean; reason?: string; detail?: string };
}

interface Held {
  decision: Decision;
  /** The round in which this daemon first held this decision. */
  sinceRound: number;
  sinceMs: number;
  /** When that round started (our clock): where the decision latency is measured from. */
  roundStartedMs: number;
  /** Whether its decision latency was observed (once: its first acknowledged write). */
  latencyObserved?: boolean;
  /** The round in which it first found it not on record (for the writer fallback). */
  pendingSince?: number;
}

export interface TargetView extends Tally {
  writer?: string;
  onRecord?: string;
  recordTerm?: VoteTerm;
  decidedRound?: number;
  decidedAtMs?: number;
  checks?: CheckOutcome[];
}

/** What GET /localinfo shows (with `stats`). */
export interface EngineView {
  node: string;
  round: number;
  members: string[];
  targets: TargetView[];
  /** Each sender's newest row: the check time kept (our clock) and what it says. */
  rows: Row[];
  /** How many keys sign and verify now: from the Secret, and retired ones in their overlap. */
  keys: { current: number; retired: number };
}

const normalize = (address: string | undefined): string => (address ?? "").replace(/^::ffff:/, "");

export class EdgeDaemon {
  #o: DaemonOptions;
  readonly #io: DaemonIo;
  readonly #store = new ResultStore();
  readonly #guard: ReplayGuard;
  #ring: Ring;
  #ringKey = "";
  /** Keys that left the Secret at the last rotation, kept until `until` (our clock). */
  #retired: { keys: Buffer[]; until: number } = { keys: [], until: 0 };
  #round = 0;
  #roundStartedMs: number | undefined;
  #running = false;
  #decideTimer: NodeJS.Timeout | undefined;
  readonly #held = new Map<string, Held>();
  /** When we last accepted a row from each peer (our clock): liveness for the writer choice. */
  readonly #heard = new Map<string, number>();
  /** Each node's value on record and when this daemon saw it change (our clock). */
  readonly #recordSeen = new Map<string, { value: string | undefined; at: number }>();
  /** Our last acknowledged write per node, until the watch cache shows it. */
  readonly #written = new Map<string, { value: Decision; term: VoteTerm }>();
  readonly #inFlight = new Set<string>();
  readonly #lastChecks = new Map<string, CheckOutcome[]>();
  readonly stats = {
    accepted: 0,
    rejected: {} as Record<string, number>,
    sendFailures: 0,
    /** Writes that changed the value on record (as this daemon saw it). */
    writes: 0,
    /** Writes of the value on record again, with a new term. */
    refreshes: 0,
  };

  readonly #metrics: EdgeMetrics;

  constructor(options: DaemonOptions, io: DaemonIo, metrics: EdgeMetrics = new EdgeMetrics()) {
    if (options.keys.length === 0) throw new Error("EdgeDaemon: no HMAC key");
    this.#o = { ...options };
    this.#io = io;
    this.#metrics = metrics;
    this.#guard = new ReplayGuard(options.messageMaxAgeMs);
    this.#ring = new Ring([], options.maxProbePeers);
    this.#refreshRing();
  }

  get round(): number {
    return this.#round;
  }

  get ring(): Ring {
    return this.#ring;
  }

  #refreshRing(): void {
    const members = this.#io.members();
    const key = members.map(m => `${m.name}=${m.ip}`).join(",");
    if (key === this.#ringKey) return;
    this.#ringKey = key;
    this.#ring = new Ring(members, this.#o.maxProbePeers);
    this.#store.retain(sender => this.#ring.has(sender));
    for (const name of this.#heard.keys()) if (!this.#ring.has(name)) this.#heard.delete(name);
    this.#io.log.info("group changed", {
      members: this.#ring.size,
      probes: this.#ring.k,
      group: members.map(m => m.name),
    });
  }

  /**
   * The keys from the Secret or file, re-read (main.ts). The ones that left keep signing and
   * verifying for `hmacOverlapMs`, so daemons that re-read at different moments (a mounted Secret
   * reaches nodes up to a minute or two apart) keep verifying each other: no results are lost.
   */
  setKeys(keys: readonly Buffer[]): void {
    const same = (a: readonly Buffer[], b: readonly Buffer[]): boolean =>
      a.length === b.length && a.every((k, i) => b[i]?.equals(k));
    if (keys.length === 0 || same(keys, this.#o.keys)) return;
    const now = this.#io.now();
    const kept = now < this.#retired.until ? this.#retired.keys : [];
    const left = [...this.#o.keys, ...kept].filter(k => !keys.some(n => n.equals(k)));
    this.#retired = { keys: left, until: now + this.#o.hmacOverlapMs };
    this.#o.keys = [...keys];
    this.#io.log.info("HMAC key rotated", {
      keys: keys.length,
      retiredKeys: left.length,
      overlapMs: this.#o.hmacOverlapMs,
    });
  }

  /** Every key this daemon signs and verifies with now: the current ones, then the retired. */
  #keys(): Buffer[] {
    const retired = this.#io.now() < this.#retired.until ? this.#retired.keys : [];
    return [...this.#o.keys, ...retired].slice(0, MAX_KEYS);
  }

  /**
   * Handles one PUT /result body from `remoteAddress`. Every check (shape, signature, clock,
   * sender in the group, source address) comes before the nonce is remembered (signing.ts).
   */
  receive(raw: unknown, remoteAddress: string | undefined): Reply {
    const now = this.#io.now();
    const verified = verifyResult(raw, {
      keys: this.#keys(),
      guard: this.#guard,
      now,
      maxSkewMs: this.#o.maxClockSkewMs,
    });
    if (!verified.ok)
      return this.#reject(REJECTION_STATUS[verified.reason], verified.reason, verified.detail);
    const m = verified.message;
    // A sender we do not know yet may have joined since our last round: look again first.
    if (!this.#ring.has(m.sender)) this.#refreshRing();
    const member = this.#ring.member(m.sender);
    if (!member) return this.#reject(403, "not-a-member", `${m.sender} is not in this group`);
    if (this.#o.verifySource && member.ip !== normalize(remoteAddress)) {
      return this.#reject(
        403,
        "wrong-source",
        `${m.sender} is ${member.ip}, message came from ${normalize(remoteAddress)}`,
      );
    }
    const remembered = rememberNonce(m, this.#guard, now);
    if (!remembered.ok) {
      return this.#reject(
        REJECTION_STATUS[remembered.reason],
        remembered.reason,
        remembered.detail,
      );
    }
    // Kept on our clock, never later than the sender's own check time (signing.ts).
    this.#store.put({ sender: m.sender, checkedAt: receivedCheckedAt(m, now), results: m.results });
    this.#heard.set(m.sender, now);
    this.stats.accepted++;
    this.#metrics.messagesAccepted.inc();
    this.#scheduleDecide();
    return { status: 200, body: { accepted: true } };
  }

  #reject(status: number, reason: string, detail: string): Reply {
    this.stats.rejected[reason] = (this.stats.rejected[reason] ?? 0) + 1;
    this.#metrics.messagesRejected.inc({ reason });
    this.#io.log.warn("result rejected", { reason, detail });
    return { status, body: { accepted: false, reason, detail } };
  }

  #scheduleDecide(): void {
    // Rows arrive in bursts after each peer's round: decide once per burst, not per row.
    this.#decideTimer ??= setTimeout(() => {
      this.#decideTimer = undefined;
      this.decide();
    }, 20);
  }

  /** One check round: probe my targets, keep and send my row, then decide. */
  async checkRound(): Promise<void> {
    if (this.#running) {
      this.#io.log.debug("previous round still running; skipped");
      return;
    }
    this.#running = true;
    try {
      this.#round++;
      this.#refreshRing();
      const targets = this.#ring.targetsOf(this.#o.self);
      this.#forgetChecksOfOthers(targets);
      if (targets.length === 0) return;
      const checkedAt = this.#io.now();
      this.#roundStartedMs = checkedAt;
      const outcomes = await Promise.all(targets.map(t => this.#io.probe(t.ip)));
      const results: Record<string, boolean> = {};
      targets.forEach((t, i) => {
        const o = outcomes[i] ?? [];
        this.#logChanges(t.name, o);
        this.#lastChecks.set(t.name, o);
        for (const check of o) {
          this.#metrics.probeOk.set({ peer: t.name, check: check.kind }, check.ok ? 1 : 0);
        }
        results[t.name] = isNormal(o, this.#o.scoreLine);
      });
      this.#store.put({ sender: this.#o.self, checkedAt, results });
      this.#send(checkedAt, results);
      this.decide();
    } finally {
      this.#running = false;
    }
  }

  /** Nodes this daemon no longer checks (they left the group, or the ring moved): no series left. */
  #forgetChecksOfOthers(targets: readonly Member[]): void {
    for (const [node, outcomes] of this.#lastChecks) {
      if (targets.some(t => t.name === node)) continue;
      this.#lastChecks.delete(node);
      for (const check of outcomes) this.#metrics.probeOk.remove({ peer: node, check: check.kind });
    }
  }

  /** A check that starts or stops failing is logged once, with why (e.g. the kubelet's 403). */
  #logChanges(node: string, outcomes: readonly CheckOutcome[]): void {
    for (const change of checkChanges(this.#lastChecks.get(node), outcomes)) {
      if (change.ok) this.#io.log.info("check passes again", { node, check: change.kind });
      else this.#io.log.warn("check failed", { node, check: change.kind, reason: change.error });
    }
  }

  #send(checkedAt: number, results: Record<string, boolean>): void {
    const keys = this.#keys();
    for (const peer of this.#ring.recipientsOf(this.#o.self)) {
      const message = signResult(
        { sender: this.#o.self, timestamp: this.#io.now(), nonce: newNonce(), checkedAt, results },
        keys,
      );
      this.#io.send(peer, message).catch((error: unknown) => {
        this.stats.sendFailures++;
        this.#io.log.debug("send failed", { peer: peer.name, error: String(error) });
      });
    }
  }

  #tallyOf(target: string, since?: number): Tally {
    return tally({
      target,
      checkers: this.#ring.checkersOf(target).map(c => c.name),
      store: this.#store,
      now: this.#io.now(),
      voteTimeoutMs: this.#o.voteTimeoutMs,
      since,
    });
  }

  /** When this daemon saw `target`'s value on record become `value` (first sight counts). */
  #recordChangedAt(target: string, value: string | undefined): number {
    const seen = this.#recordSeen.get(target);
    if (seen && seen.value === value) return seen.at;
    const at = this.#io.now();
    this.#recordSeen.set(target, { value, at });
    return at;
  }

  /**
   * Writer liveness is stricter than vote freshness: a live peer sends every period, so one not
   * heard from for 1.5 periods (our receipt clock) is passed over. Otherwise a dead writer, e.g.
   * a dead lowest-named node voted on itself, would hold every decision it was due to write for
   * the whole vote timeout. Two daemons briefly both writing is harmless (same idempotent patch).
   */
  #writerOf(target: string): string | undefined {
    const now = this.#io.now();
    const window = 1.5 * this.#o.checkPeriodMs;
    return writerOf({
      checkers: this.#ring.checkersOf(target).map(c => c.name),
      self: this.#o.self,
      alive: name => now - (this.#heard.get(name) ?? Number.NEGATIVE_INFINITY) <= window,
    });
  }

  /**
   * Whether our last write of `value` to `target` is not in the watch cache yet and was made less
   * than a period ago. decide() runs on every burst of rows; until the watch catches up it would
   * write the same vote again each time. The record itself is always read from the watch, so a
   * value another daemon wrote after ours is seen at once.
   */
  #awaitingWatch(target: string, value: Decision, record: VoteOnRecord): boolean {
    const written = this.#written.get(target);
    if (written?.value !== value) return false;
    const shown =
      record.value === value &&
      (record.term?.validUntilMs ?? Number.NEGATIVE_INFINITY) >= written.term.validUntilMs;
    if (shown) this.#written.delete(target);
    return !shown && this.#io.now() - written.term.decidedAtMs < this.#o.checkPeriodMs;
  }

  /** Tallies every node this daemon checks (only checkers can be writers) and writes. */
  decide(): void {
    for (const { name } of this.#ring.targetsOf(this.#o.self)) {
      const t = this.#tallyOf(name);
      const held = this.#hold(name, t.decision);
      const record = this.#io.onRecord(name);
      if (held && t.decision !== record.value) held.pendingSince ??= this.#round;
      else if (held) held.pendingSince = undefined;
      const kind = this.#writeKind(t, held, record);
      if (kind && held && !this.#awaitingWatch(name, held.decision, record)) {
        this.#write(name, held, t.reason, kind);
      }
    }
  }

  /** Whether to write `t`'s decision: to change the value on record, or to refresh its term. */
  #writeKind(
    t: Tally,
    held: Held | undefined,
    record: VoteOnRecord,
  ): "change" | "refresh" | undefined {
    // Only a majority of votes cast after the record last changed may change it (tally.ts);
    // a refresh keeps the value on record, and needs only the majority of fresh votes.
    const since = this.#recordChangedAt(t.target, record.value);
    const backed =
      t.decision !== undefined && this.#tallyOf(t.target, since).decision === t.decision;
    const isWriter = this.#writerOf(t.target) === this.#o.self;
    const change = shouldWrite({
      decision: backed ? t.decision : undefined,
      onRecord: record.value,
      isWriter,
      pendingPeriods: held?.pendingSince === undefined ? 0 : this.#round - held.pendingSince,
      fallbackPeriods: this.#o.writerFallbackPeriods,
    });
    if (change) return "change";
    const refresh = shouldRefresh({
      decision: t.decision,
      onRecord: record.value,
      termLeftMs: record.term && record.term.validUntilMs - this.#io.now(),
      isWriter,
      checkPeriodMs: this.#o.checkPeriodMs,
      voteTermPeriods: this.#o.voteTermPeriods,
    });
    return refresh ? "refresh" : undefined;
  }

  #hold(target: string, decision: Decision | undefined): Held | undefined {
    const held = this.#held.get(target);
    if (decision === undefined) {
      this.#held.delete(target);
      return undefined;
    }
    if (held?.decision === decision) return held;
    const now = this.#io.now();
    const fresh: Held = {
      decision,
      sinceRound: this.#round,
      sinceMs: now,
      roundStartedMs: this.#roundStartedMs ?? now,
    };
    this.#held.set(target, fresh);
    return fresh;
  }

  /** Writes the held decision with a term from now; `kind`: whether the value on record changes. */
  #write(target: string, held: Held, reason: string, kind: "change" | "refresh"): void {
    const value = held.decision;
    if (this.#inFlight.has(target)) return;
    this.#inFlight.add(target);
    const now = this.#io.now();
    const term = {
      decidedAtMs: now,
      validUntilMs: now + this.#o.voteTermPeriods * this.#o.checkPeriodMs,
    };
    const logged = { node: target, value, validUntil: new Date(term.validUntilMs).toISOString() };
    this.#io
      .write(target, value, term)
      .then(() => {
        this.#written.set(target, { value, term });
        this.#metrics.votesWritten.inc({ value });
        if (kind === "change" && !held.latencyObserved) {
          held.latencyObserved = true;
          this.#metrics.decisionSeconds.observe((this.#io.now() - held.roundStartedMs) / 1000);
        }
        if (kind === "change") {
          this.stats.writes++;
          this.#io.log.info("node-health written", { ...logged, reason });
        } else {
          // Every period for every decided node: not worth an info line each.
          this.stats.refreshes++;
          this.#io.log.debug("vote term refreshed", logged);
        }
      })
      .catch((error: unknown) =>
        this.#io.log.warn("node-health write failed", { ...logged, kind, error: String(error) }),
      )
      .finally(() => this.#inFlight.delete(target));
  }

  /** What this daemon sees: for GET /localinfo and the tests' view of each half. */
  view(): EngineView {
    const targets = this.#ring.targetsOf(this.#o.self).map(m => {
      const held = this.#held.get(m.name);
      const record = this.#io.onRecord(m.name);
      return {
        ...this.#tallyOf(m.name),
        writer: this.#writerOf(m.name),
        onRecord: record.value,
        recordTerm: record.term,
        decidedRound: held?.sinceRound,
        decidedAtMs: held?.sinceMs,
        checks: this.#lastChecks.get(m.name),
      };
    });
    return {
      node: this.#o.self,
      round: this.#round,
      members: this.#ring.members.map(m => m.name),
      targets,
      rows: this.#ring.members.flatMap(m => this.#store.get(m.name) ?? []),
      keys: { current: this.#o.keys.length, retired: this.#keys().length - this.#o.keys.length },
    };
  }

  stop(): void {
    if (this.#decideTimer) clearTimeout(this.#decideTimer);
    this.#decideTimer = undefined;
  }
}
