// Signed result messages: canonical JSON, HMAC-SHA256, and the receiver's checks.
//
// SuperEdge signed `json(sourceIP) + json(resultDetail)` with a shared key and nothing else, so a
// captured message could be replayed forever and kept "fresh" by the receiver's own clock. Here the
// signature covers sender, timestamp, nonce, the sender's check time and the results, as canonical
// JSON (object keys sorted by UTF-16 code unit, no whitespace); a receiver drops a message that is
// malformed, badly signed, outside the clock window, or whose nonce it has seen in that window.
// Verifying records nothing: a nonce is remembered (`rememberNonce`) only once the receiver has
// accepted the whole message, sender and source address included. Remembering it earlier would let
// anyone who sniffs a genuine message burn its nonce by sending a copy from another address (or a
// forged one), so that the real one is refused as a replay; and forged traffic could fill the cache.
//
// Key rotation without a gap: a daemon holds one or more keys (the Secret's lines, plus for
// `--hmac-overlap` the key it had before the last change) and signs with EVERY one: `hmac` with
// the newest, `extraHmacs` with the others. A receiver accepts a message when any signature
// matches any key it holds. So while one daemon has the new key and another still the old, each
// verifies the other: the new-key daemon signs with the old key too, and keeps accepting it.
//
// Clocks: a message is refused as stale when its timestamp (or check time) is more than
// `maxAgeMs` behind our clock, and as from-the-future when its timestamp is more than
// `maxSkewMs` ahead. A result is then kept with `receivedCheckedAt`, which a sender's clock
// running ahead cannot push into the future (see there).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** JSON with object keys sorted at every level and no whitespace; rejects non-finite numbers. */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSON.stringify(value);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`canonical JSON has no ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map(k => `${JSON.stringify(k)}:${canonicalJson(value[k] as Json)}`).join(",")}}`;
}

/** What a daemon says each period: its own check results, with the time it checked. */
export interface ResultBody {
  sender: string;
  /** When the message was made (epoch ms, sender's clock). */
  timestamp: number;
  /** 128 random bits, hex. */
  nonce: string;
  /** When the sender ran these checks (epoch ms, sender's clock): the vote's freshness. */
  checkedAt: number;
  /** Node name → whether the sender found it normal. */
  results: Record<string, boolean>;
}

export interface SignedResult extends ResultBody {
  /** HMAC with the sender's newest key. */
  hmac: string;
  /** HMACs with its other keys, during a rotation only (absent otherwise). */
  extraHmacs?: string[];
}

/** At most this many keys sign a message (the Secret's keys plus the one before a rotation). */
export const MAX_KEYS = 4;

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export const signedResultSchema = z.strictObject({
  sender: z.string().regex(NAME, "must be a node name"),
  timestamp: z.number().int().nonnegative(),
  nonce: z.string().regex(/^[0-9a-f]{32}$/, "must be 32 hex digits"),
  checkedAt: z.number().int().nonnegative(),
  results: z.record(z.string().regex(NAME, "must be a node name"), z.boolean()),
  hmac: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 hex digits"),
  extraHmacs: z
    .array(z.string().regex(/^[0-9a-f]{64}$/, "must be 64 hex digits"))
    .max(MAX_KEYS - 1)
    .optional(),
});

function mac(body: ResultBody, key: Buffer): Buffer {
  const { sender, timestamp, nonce, checkedAt, results } = body;
  return createHmac("sha256", key)
    .update(canonicalJson({ sender, timestamp, nonce, checkedAt, results }))
    .digest();
}

export function newNonce(): string {
  return randomBytes(16).toString("hex");
}

/** Signs with every key given: `hmac` with the first (the newest), `extraHmacs` with the rest. */
export function signResult(body: ResultBody, keys: Buffer | readonly Buffer[]): SignedResult {
  const [first, ...rest] = Buffer.isBuffer(keys) ? [keys] : keys;
  if (first === undefined) throw new Error("signResult: no key");
  const signed: SignedResult = { ...body, hmac: mac(body, first).toString("hex") };
  if (rest.length > 0) signed.extraHmacs = rest.map(k => mac(body, k).toString("hex"));
  return signed;
}

export type Rejection = "malformed" | "bad-signature" | "stale" | "from-the-future" | "replayed";

/** HTTP status a receiver answers for each rejection. */
export const REJECTION_STATUS: Record<Rejection, number> = {
  malformed: 400,
  "bad-signature": 401,
  stale: 422,
  "from-the-future": 422,
  replayed: 409,
};

export type Verified =
  | { ok: true; message: SignedResult }
  | { ok: false; reason: Rejection; detail: string };

/**
 * Nonces seen within the clock window. A nonce older than the window needs no memory: its
 * message is rejected as stale anyway. Bounded by the window × message rate; pruned as it goes.
 */
export class ReplayGuard {
  readonly #seen = new Map<string, number>();
  #lastPrune = 0;

  constructor(readonly windowMs: number) {}

  /** Whether `nonce` was recorded within the window; records nothing. */
  has(nonce: string): boolean {
    return this.#seen.has(nonce);
  }

  /** True when `nonce` is new (and records it), false when seen within the window. */
  admit(nonce: string, timestamp: number, now: number): boolean {
    if (now - this.#lastPrune > this.windowMs / 4) this.#prune(now);
    if (this.#seen.has(nonce)) return false;
    this.#seen.set(nonce, timestamp);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }

  #prune(now: number): void {
    this.#lastPrune = now;
    for (const [nonce, ts] of this.#seen) {
      if (now - ts > this.windowMs) this.#seen.delete(nonce);
    }
  }
}

/** A message too old, too far ahead of our clock, or checked after it was sent. */
function clockProblem(
  message: ResultBody,
  now: number,
  maxAgeMs: number,
  maxSkewMs: number,
): Extract<Verified, { ok: false }> | undefined {
  if (now - message.timestamp > maxAgeMs || now - message.checkedAt > maxAgeMs) {
    return {
      ok: false,
      reason: "stale",
      detail: `timestamp ${now - message.timestamp} ms behind our clock, allowed ${maxAgeMs} ms`,
    };
  }
  if (message.timestamp - now > maxSkewMs) {
    return {
      ok: false,
      reason: "from-the-future",
      detail: `timestamp ${message.timestamp - now} ms ahead of our clock, allowed skew ${maxSkewMs} ms`,
    };
  }
  if (message.checkedAt > message.timestamp) {
    return { ok: false, reason: "from-the-future", detail: "checkedAt is after the timestamp" };
  }
  return undefined;
}

/**
 * The check time a receiver keeps for a verified message, on its own clock. The sender's
 * `timestamp - checkedAt` (how long before sending it checked) is a difference on ONE clock, so
 * skew cancels out: `now - (timestamp - checkedAt)` is when it checked, as seen here, late only by
 * the transit time. Taking the earlier of that and the sender's own `checkedAt` means a sender
 * whose clock runs ahead gains no freshness (its results expire as a synchronised sender's
 * would), and one whose clock runs behind loses some (safe: a missing vote never writes "false").
 */
export function receivedCheckedAt(message: ResultBody, now: number): number {
  return Math.min(message.checkedAt, now - (message.timestamp - message.checkedAt));
}

function replayed(message: ResultBody): Extract<Verified, { ok: false }> {
  return { ok: false, reason: "replayed", detail: `nonce ${message.nonce} already seen` };
}

/**
 * Verifies a received body: shape, signature (any key), clock window, and that its nonce is not
 * remembered yet. Records nothing: the receiver calls `rememberNonce` once it accepts the message.
 */
export function verifyResult(
  raw: unknown,
  options: {
    /** Every key this receiver accepts (newest first). */
    keys: readonly Buffer[];
    guard: ReplayGuard;
    now: number;
    /** How far ahead of our clock a timestamp may be (the allowed clock skew). */
    maxSkewMs: number;
  },
): Verified {
  const parsed = signedResultSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: "malformed",
      detail: `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
    };
  }
  const message = parsed.data;
  const given = [message.hmac, ...(message.extraHmacs ?? [])].map(h => Buffer.from(h, "hex"));
  const signed = options.keys.some(key => {
    const expected = mac(message, key);
    return given.some(g => timingSafeEqual(expected, g));
  });
  if (!signed) {
    return { ok: false, reason: "bad-signature", detail: "no hmac matches the body with our keys" };
  }
  const { now, guard } = options;
  const clock = clockProblem(message, now, guard.windowMs, options.maxSkewMs);
  if (clock) return clock;
  if (guard.has(message.nonce)) return replayed(message);
  return { ok: true, message };
}

/**
 * Records the nonce of a message the receiver has verified AND accepted (sender, source): the
 * last step before the message is used. Check and record are one step, so of two copies only the
 * first counts; the other is refused as replayed.
 */
export function rememberNonce(message: SignedResult, guard: ReplayGuard, now: number): Verified {
  if (!guard.admit(message.nonce, message.timestamp, now)) return replayed(message);
  return { ok: true, message };
}
