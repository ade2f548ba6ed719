// The status a checksum object should carry, from what the guard observed. Pure: the reconciler
// patches it only when it differs from what is stored.
import type { GuardMode } from ".";
import type { SignatureProblem } from ".";
import { setCondition } from "../conditions";
import {
  CONSISTENT_CONDITION,
  STATUS_ID_CAP,
  type ChecksumCondition,
  type ChecksumKind,
  type ChecksumStatus,
} from "./crd";

/** What verifying one checksum object against the cluster found. */
export interface Observation {
  kind: ChecksumKind;
  /** The cluster's checksum in the object's mode. */
  observedChecksum: string;
  objectCount: number;
  publishedChecksum?: string;
  /** undefined when the object lists no IDs. */
  publishedCount?: number;
  /** false when spec.ids do not hash to spec.checksum. */
  publishedIdsHash?: boolean;
  missing: string[];
  unexpected: string[];
  missingCount: number;
  unexpectedCount: number;
  /** A spec that does not parse: the message says which field. */
  invalidSpec?: string;
  /** A newer checksum object was published (and the grace period is over): this one no longer counts. */
  supersededBy?: string;
  /** Signatures are required and this object's is missing or wrong: it is ignored. */
  signatureProblem?: { reason: SignatureProblem; message: string };
  /** The objects (namespace/name) behind the unexpected IDs, capped. */
  unexpectedObjects?: string[];
  /** What the gateway does with a mismatch; undefined: not said. */
  mode?: GuardMode;
}

/** What a mismatch means for traffic, by guard mode: said in the condition and the Event. */
const CONSEQUENCE: Record<GuardMode, string> = {
  enforce: "enforce: the gateway keeps serving its last good configuration",
  observe: "observe: enforcing would refuse this; the gateway serves it",
  off: "the guard is off: the gateway serves it",
};

const SHOWN = 3;

/** Which objects differ, short enough for a kubectl column: names where known, else IDs. */
export function differingSummary(o: Observation): string | undefined {
  const named = (id: string): string => id.replace(/@[0-9a-f]{64}$/, "");
  const part = (label: string, items: string[], total: number): string | undefined => {
    if (total === 0) return undefined;
    const more = total > SHOWN ? ` (+${total - SHOWN} more)` : "";
    return `${label} ${items.slice(0, SHOWN).join(", ")}${more}`;
  };
  const unexpected = o.unexpectedObjects?.length ? o.unexpectedObjects : o.unexpected.map(named);
  const parts = [
    part("unexpected", unexpected, o.unexpectedCount),
    part("missing", o.missing.map(named), o.missingCount),
  ].filter((p): p is string => p !== undefined);
  return parts.length > 0 ? parts.join("; ") : undefined;
}

const NOUN = { ingress: "Ingress objects", secret: "TLS Secrets" } as const;

function condition(o: Observation): Pick<ChecksumCondition, "status" | "reason" | "message"> {
  if (o.invalidSpec) return { status: "False", reason: "InvalidSpec", message: o.invalidSpec };
  if (o.signatureProblem) {
    const { reason, message } = o.signatureProblem;
    return { status: "False", reason, message: `${message}: the guard ignores this object` };
  }
  if (o.supersededBy !== undefined) {
    return {
      status: "False",
      reason: "Superseded",
      message: `${o.supersededBy} is newer: only the newest checksum object attests the cluster`,
    };
  }
  if (!o.publishedChecksum)
    return { status: "False", reason: "NoChecksum", message: "spec.checksum is not set" };
  if (o.publishedIdsHash === false) {
    return {
      status: "False",
      reason: "PublishedIdsInconsistent",
      message: "spec.ids do not hash to spec.checksum: the publisher wrote inconsistent data",
    };
  }
  if (o.observedChecksum === o.publishedChecksum) {
    return {
      status: "True",
      reason: "Matched",
      message: `the cluster's ${o.objectCount} ${NOUN[o.kind]} hash to spec.checksum`,
    };
  }
  const detail =
    o.publishedCount === undefined
      ? "spec.ids is empty, so the differing objects cannot be named"
      : `${o.missingCount} published IDs missing, ${o.unexpectedCount} unexpected` +
        (o.missing[0] ? `; first missing: ${o.missing[0]}` : "") +
        (o.unexpected[0] ? `; first unexpected: ${o.unexpected[0]}` : "");
  const consequence = o.mode === undefined ? "" : ` (${CONSEQUENCE[o.mode]})`;
  return {
    status: "False",
    reason: "Mismatch",
    message: `the cluster's ${o.objectCount} ${NOUN[o.kind]} hash to ${o.observedChecksum}: ${detail}${consequence}`,
  };
}

export function desiredStatus(
  o: Observation,
  generation: number | undefined,
  previous: ChecksumStatus | undefined,
  now: Date,
): ChecksumStatus {
  const conditions = setCondition(
    previous?.conditions,
    { type: CONSISTENT_CONDITION, ...condition(o), observedGeneration: generation },
    now,
  );
  return {
    observedGeneration: generation,
    observedChecksum: o.observedChecksum,
    objectCount: o.objectCount,
    publishedCount: o.publishedCount,
    missingCount: o.missingCount,
    unexpectedCount: o.unexpectedCount,
    missing: o.missing.slice(0, STATUS_ID_CAP),
    unexpected: o.unexpected.slice(0, STATUS_ID_CAP),
    differing: differingSummary(o),
    enforcement: o.mode,
    conditions,
  };
}

export function isConsistent(status: ChecksumStatus | undefined): boolean | undefined {
  const c = status?.conditions?.find(x => x.type === CONSISTENT_CONDITION);
  return c === undefined ? undefined : c.status === "True";
}
