// The peers' verdict on a node, as the edge-health daemons leave it on the Node object.
//
// Two writers exist: Bulwark's daemon writes `superedgehealth/node-health: "true" | "false"`, and
// SuperEdge's own daemon writes `nodeunhealth: "yes"` on an unhealthy majority and deletes it on a
// healthy one. Precedence: `nodeunhealth` wins. It is only ever written on an unhealthy majority,
// so its presence is a positive "evict" signal, and when the two disagree the safe mistake is a
// normal eviction (Kubernetes' own behaviour), not keeping a possibly dead node's pods. Like
// SuperEdge's webhook, any value of `nodeunhealth` counts; a value other than "yes" is reported.
//
// A vote has a term. Bulwark's daemons write, in the same merge patch as the value, when they
// decided it (`edge.bulwark.dev/vote-decided-at`) and until when it holds
// (`edge.bulwark.dev/vote-valid-until`, by default 3 of the daemon's check periods later: the
// daemon knows its period, admission does not). The writer refreshes the term while the majority
// holds. A "true" past its term, with no term, or with a term that cannot be right (decided in
// the future, or valid for longer than `maxTermMs`) is stale, and a stale vote protects nothing:
// when every daemon of a zone stops (crash, bad rollout, the zone powered off), nobody refreshes
// the term, and its nodes fall back to normal eviction within one term. Annotations rather than a
// Lease per node: the value and its term arrive in one write, are read from one object admission
// already has, and SuperEdge's tools keep seeing the value they know.
import { z } from "zod";
import {
  EDGE_HEALTH_ANNOTATION,
  EDGE_UNHEALTHY_ANNOTATION,
  EDGE_VOTE_DECIDED_AT_ANNOTATION,
  EDGE_VOTE_VALID_UNTIL_ANNOTATION,
} from "../names";
import type { Node } from "./types";
import { quote } from "../result";

export type Vote = "healthy" | "unhealthy" | "stale" | "none";

export interface VoteReading {
  vote: Vote;
  /** Why a healthy vote is stale (the vote is then "stale"), in words. */
  staleReason?: string;
  /** The term of the vote on record, when it has a readable one. */
  term?: VoteTerm;
  /** Unexpected annotation values, for a log line or an Event; the vote is still decided. */
  warnings: string[];
}

export interface VoteTerm {
  decidedAtMs: number;
  validUntilMs: number;
}

export interface VoteRules {
  /** The longest term admission accepts: a longer one is written by hand or by a broken daemon. */
  maxTermMs: number;
  /** How far in the future a decision time may be (the daemons' clocks against ours). */
  maxClockSkewMs: number;
}

/** Ten minutes covers a check period of up to 200 s at the default 3 periods per term. */
export const DEFAULT_VOTE_RULES: VoteRules = { maxTermMs: 10 * 60_000, maxClockSkewMs: 60_000 };

/**
 * RFC 3339 in UTC, as `Date.toISOString` writes it (fraction optional): one spelling, no offsets.
 * Date.parse rolls "02-31" over into March, so the parsed date must print back the same.
 */
const rfc3339Utc = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/,
    'must be an RFC 3339 time in UTC, e.g. "2026-12-04T15:00:00Z"',
  )
  .refine(s => {
    const ms = Date.parse(s);
    return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === s.slice(0, 19);
  }, "is not a valid date")
  .transform(s => Date.parse(s));

/** The annotations a daemon writes for a decision: the value and its term, in one patch. */
export function voteAnnotations(value: "true" | "false", term: VoteTerm): Record<string, string> {
  return {
    [EDGE_HEALTH_ANNOTATION]: value,
    [EDGE_VOTE_DECIDED_AT_ANNOTATION]: new Date(term.decidedAtMs).toISOString(),
    [EDGE_VOTE_VALID_UNTIL_ANNOTATION]: new Date(term.validUntilMs).toISOString(),
  };
}

/** The term on `node`, or why there is no usable one (naming the annotation). */
export function readTerm(node: Node): { term: VoteTerm } | { problem: string } {
  const annotations = node.metadata?.annotations ?? {};
  const times: number[] = [];
  for (const key of [EDGE_VOTE_DECIDED_AT_ANNOTATION, EDGE_VOTE_VALID_UNTIL_ANNOTATION]) {
    const raw = annotations[key];
    if (raw === undefined) return { problem: `metadata.annotations["${key}"] is missing` };
    const parsed = rfc3339Utc.safeParse(raw);
    if (!parsed.success) {
      const message = parsed.error.issues.map(i => i.message).join("; ");
      return { problem: `metadata.annotations["${key}"] ${message}; got ${quote(raw)}` };
    }
    times.push(parsed.data);
  }
  const [decidedAtMs, validUntilMs] = times as [number, number];
  return { term: { decidedAtMs, validUntilMs } };
}

/** Why `term` does not make a vote current at `nowMs`, or undefined when it does. */
export function termProblem(term: VoteTerm, nowMs: number, rules: VoteRules): string | undefined {
  const at = (ms: number) => new Date(ms).toISOString();
  if (term.validUntilMs <= term.decidedAtMs) {
    return `valid until ${at(term.validUntilMs)}, not after its decision at ${at(term.decidedAtMs)}`;
  }
  if (term.validUntilMs - term.decidedAtMs > rules.maxTermMs) {
    return `a term of ${Math.round((term.validUntilMs - term.decidedAtMs) / 1000)}s is longer than the ${rules.maxTermMs / 1000}s allowed`;
  }
  if (term.decidedAtMs > nowMs + rules.maxClockSkewMs) {
    return `decided at ${at(term.decidedAtMs)}, in the future`;
  }
  if (nowMs >= term.validUntilMs) return `expired at ${at(term.validUntilMs)}`;
  return undefined;
}

/** What is odd about a `nodeunhealth` annotation (it is read as unhealthy regardless). */
function nodeUnhealthWarnings(annotations: Readonly<Record<string, string>>): string[] {
  const warnings: string[] = [];
  const unhealthy = annotations[EDGE_UNHEALTHY_ANNOTATION];
  if (unhealthy !== "yes") {
    warnings.push(
      `metadata.annotations["${EDGE_UNHEALTHY_ANNOTATION}"]: expected "yes", got ${quote(unhealthy ?? "")}; read as unhealthy`,
    );
  }
  if (annotations[EDGE_HEALTH_ANNOTATION] === "true") {
    warnings.push(
      `metadata.annotations: "${EDGE_UNHEALTHY_ANNOTATION}" and "${EDGE_HEALTH_ANNOTATION}": "true" disagree; read as unhealthy`,
    );
  }
  return warnings;
}

/**
 * The vote on `node` at `now`. A healthy vote counts only within a sound term (see above); an
 * unhealthy one counts whatever its term, since it can only make Bulwark do what Kubernetes does.
 */
export function readVote(
  node: Node,
  now: Date = new Date(),
  rules: VoteRules = DEFAULT_VOTE_RULES,
): VoteReading {
  const annotations = node.metadata?.annotations ?? {};
  const warnings: string[] = [];
  const health = annotations[EDGE_HEALTH_ANNOTATION];
  if (annotations[EDGE_UNHEALTHY_ANNOTATION] !== undefined) {
    return { vote: "unhealthy", warnings: nodeUnhealthWarnings(annotations) };
  }
  if (health === "false") return { vote: "unhealthy", warnings };
  if (health === "true") {
    const read = readTerm(node);
    if ("problem" in read) return { vote: "stale", staleReason: read.problem, warnings };
    const problem = termProblem(read.term, now.getTime(), rules);
    if (problem !== undefined) {
      return {
        vote: "stale",
        staleReason: `the healthy vote ${problem}`,
        term: read.term,
        warnings,
      };
    }
    return { vote: "healthy", term: read.term, warnings };
  }
  if (health !== undefined) {
    // A typo ("True", "yes") must not protect a node: read it as no vote, and say so.
    warnings.push(
      `metadata.annotations["${EDGE_HEALTH_ANNOTATION}"]: expected "true" or "false", got ${quote(health)}; read as no vote`,
    );
  }
  return { vote: "none", warnings };
}

/** The vote on `node` at `now`: "healthy" only within its term. */
export function nodeVote(node: Node, now?: Date, rules?: VoteRules): Vote {
  return readVote(node, now, rules).vote;
}

/**
 * The vote as SuperEdge's own daemons leave it, for a site that runs Bulwark's admission with
 * SuperEdge's daemons (BULWARK_EDGE_VOTES=superedge). Those daemons remove `nodeunhealth` on a
 * healthy majority and write nothing while it holds, so an absent annotation means healthy only
 * while they are alive to write it: fresh means at least `needed` of the node's peers are live
 * witnesses (Ready, so their kubelets reach the API server and the pod status is current, and
 * running a Ready SuperEdge edge-health pod). `needed` is the peers that, with the node's word on
 * itself, make a strict majority of its group. No term: SuperEdge writes none, and its writes
 * carry no time Bulwark could check.
 */
export function readSuperEdgeVote(
  node: Node,
  witnesses: { live: number; needed: number },
): VoteReading {
  const annotations = node.metadata?.annotations ?? {};
  if (annotations[EDGE_UNHEALTHY_ANNOTATION] !== undefined) {
    return { vote: "unhealthy", warnings: nodeUnhealthWarnings(annotations) };
  }
  if (annotations[EDGE_HEALTH_ANNOTATION] === "false") return { vote: "unhealthy", warnings: [] };
  if (witnesses.live >= witnesses.needed) return { vote: "healthy", warnings: [] };
  return {
    vote: "stale",
    staleReason: `no nodeunhealth, but only ${witnesses.live} of the ${witnesses.needed} peers needed run a Ready SuperEdge edge-health pod on a Ready node`,
    warnings: [],
  };
}
