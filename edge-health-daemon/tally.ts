// The vote: counting fresh results, the safe rule for small and split groups, and who writes.
//
// Rule (SuperEdge's, made explicit): the electorate of node T is its checkers (membership.ts
// `Ring.checkersOf`: the whole group up to maxProbePeers+1 members, else T and its k ring
// predecessors), m of them. A result counts when its sender is in the electorate and the SENDER's
// check time is within voteTimeout (the receipt time is never used, so a replayed or relayed old
// row cannot look fresh). With `needed = floor(m/2) + 1`, a strict majority of the WHOLE
// electorate (not of the voters heard from):
//   yes ≥ needed → "true";  no ≥ needed → "false";  otherwise no decision: nothing is written.
//
// A written vote has a term (core/edge/vote.ts): decided now, valid for voteTermPeriods check
// periods. While the same decision holds, it is written again with a new term (`shouldRefresh`),
// so a vote on record stays current only as long as a majority keeps deciding it; with no
// decision nobody renews it, and a "true" past its term protects nothing (the Pepr side reads it
// as stale and the node is evicted as Kubernetes would).
// Consequences, stated:
//   - group of 1 (alone in its zone): never decides (needed would be 1: a node's word on itself).
//   - group of 2: needed is 2, so "true" needs both, the node's word on itself plus its peer's,
//     and "false" needs both too (the node itself saying it is unhealthy). A single live peer can
//     never write either value alone: when one node is powered off, its last "true" is not
//     renewed and goes stale within one term; it is not protected until the autonomy limit.
//   - even split (2|2, 3|3, ...): neither half reaches `needed`, nobody writes; the last votes
//     go stale within one term.
//   - odd split (4|3): the larger half is a strict majority of the group and votes the smaller
//     half "false" (it cannot tell "cut off from us" from "dead"); the smaller half decides
//     nothing, so it can never vote a healthy node of the larger half unhealthy.
//   - a whole zone silent (every daemon stopped, or powered off): nobody renews; every vote goes
//     stale within one term.
//   - whole group cut off from the API server: decisions happen but writes fail; the votes on
//     record go stale within one term.
// "false" is therefore never written without a strict majority of the whole electorate.
//
// One writer per decision: the lowest-named checker of T that this daemon hears from (a row
// received within 1.5 check periods, or itself). Each daemon computes that from its own view and
// writes only when it is the writer and the Node's value differs, or its term has less than
// voteTermPeriods − 1 periods left (so the writer renews about once a period). If a decision stays
// unwritten for writerFallbackPeriods (the writer lost the API server, or views differ), every
// daemon holding the decision writes it, as SuperEdge's daemons all do; and every daemon holding
// the decision renews a term with less than one period left, so a dead writer does not let a live
// majority's vote expire. Writes are merge patches of the value and its term, in one patch.
//
// Evidence newer than the record: a daemon overwrites the Node's value only when a strict majority
// of results checked AFTER that value last changed (as this daemon saw it change) supports the new
// value. Right after a 3|4 cut, the 3 still hold the 4's fresh-but-old "yes" rows for up to the
// vote timeout; without this rule a minority node that happens to be lowest-named would write
// "true" back over the majority's new "false" until those rows expire. With it, only votes cast
// after the majority's write count, and the 3 have only 3. A refresh writes the value already on
// record, so the rule does not apply to it: the majority of fresh results is its backing.

export type Decision = "true" | "false";

export interface Row {
  sender: string;
  /** The sender's check time as the receiver keeps it (signing.ts `receivedCheckedAt`). */
  checkedAt: number;
  results: Readonly<Record<string, boolean>>;
}

/** The newest row per sender. An older row never replaces a newer one. */
export class ResultStore {
  readonly #rows = new Map<string, Row>();

  put(row: Row): boolean {
    const old = this.#rows.get(row.sender);
    if (old && old.checkedAt >= row.checkedAt) return false;
    this.#rows.set(row.sender, row);
    return true;
  }

  get(sender: string): Row | undefined {
    return this.#rows.get(sender);
  }

  /** Drops rows of senders that left the group. */
  retain(keep: (sender: string) => boolean): void {
    for (const sender of this.#rows.keys()) if (!keep(sender)) this.#rows.delete(sender);
  }

  isFresh(sender: string, now: number, voteTimeoutMs: number): boolean {
    const row = this.#rows.get(sender);
    return row !== undefined && now - row.checkedAt <= voteTimeoutMs;
  }
}

export interface Tally {
  target: string;
  electorate: number;
  needed: number;
  yes: string[];
  no: string[];
  decision?: Decision;
  /** Why there is (or is not) a decision, in words. */
  reason: string;
}

export function tally(input: {
  target: string;
  checkers: readonly string[];
  store: ResultStore;
  now: number;
  voteTimeoutMs: number;
  /** Count only results checked after this time (epoch ms); see `since` in daemon.ts. */
  since?: number;
}): Tally {
  const { target, checkers, store, now, voteTimeoutMs } = input;
  const since = input.since ?? Number.NEGATIVE_INFINITY;
  const m = checkers.length;
  const needed = Math.floor(m / 2) + 1;
  const yes: string[] = [];
  const no: string[] = [];
  for (const sender of checkers) {
    if (!store.isFresh(sender, now, voteTimeoutMs)) continue;
    const row = store.get(sender);
    if (!row || row.checkedAt <= since) continue;
    const verdict = row.results[target];
    if (verdict === true) yes.push(sender);
    else if (verdict === false) no.push(sender);
  }
  const base = { target, electorate: m, needed, yes, no };
  if (m < 2) return { ...base, reason: "a group of one never votes" };
  if (yes.length >= needed) {
    return { ...base, decision: "true", reason: `${yes.length} of ${m} say normal` };
  }
  if (no.length >= needed) {
    return { ...base, decision: "false", reason: `${no.length} of ${m} say unhealthy` };
  }
  return {
    ...base,
    reason: `no strict majority: ${yes.length} yes, ${no.length} no, ${needed} of ${m} needed`,
  };
}

/** The daemon that writes T's decision: the lowest-named checker it hears from (or itself). */
export function writerOf(input: {
  checkers: readonly string[];
  self: string;
  alive: (name: string) => boolean;
}): string | undefined {
  const candidates = input.checkers.filter(c => c === input.self || input.alive(c)).sort();
  return candidates[0];
}

/** Whether this daemon should patch T now. */
export function shouldWrite(input: {
  decision: Decision | undefined;
  onRecord: string | undefined;
  isWriter: boolean;
  /** Periods the decision has been held here without being on record. */
  pendingPeriods: number;
  fallbackPeriods: number;
}): boolean {
  if (input.decision === undefined || input.decision === input.onRecord) return false;
  return input.isWriter || input.pendingPeriods >= input.fallbackPeriods;
}

/**
 * Whether this daemon should write the decision on record again with a new term. The writer
 * renews when fewer than voteTermPeriods − 1 periods are left (about once a period); the others
 * only when less than one period is left (the writer is dead or cannot write). A missing or
 * unreadable term counts as none left. A different decision is a change (`shouldWrite`), and no
 * decision renews nothing: the term runs out.
 */
export function shouldRefresh(input: {
  decision: Decision | undefined;
  onRecord: string | undefined;
  /** The term on record's time left (negative: expired); undefined when it has no readable term. */
  termLeftMs: number | undefined;
  isWriter: boolean;
  checkPeriodMs: number;
  voteTermPeriods: number;
}): boolean {
  if (input.decision === undefined || input.decision !== input.onRecord) return false;
  const periodsLeft = (input.termLeftMs ?? Number.NEGATIVE_INFINITY) / input.checkPeriodMs;
  return periodsLeft < (input.isWriter ? input.voteTermPeriods - 1 : 1);
}
