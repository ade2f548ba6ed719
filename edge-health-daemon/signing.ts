// Signed result messages: canonical JSON, HMAC-SHA256, and the receiver's checks.
//
// SuperEdge signed `json(sourceIP) + json(resultDetail)` with a shared key and nothing else, so a
// captured message could be replayed forever and kept "fresh" by the receiver's own clock. Here the
// signature covers sender, timestamp, nonce, the sender's check time and the results, as canonical
// JSON (object keys sorted by UTF-16 code unit, no whitespace); a receiver drops a message that is
// malformed, badly signed, outside the clock window, or whose nonce it has seen in that window.
// Nonces are recorded only after the signature verifies, so forged traffic cannot fill the cache.
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
  hmac: string;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export const signedResultSchema = z.strictObject({
  sender: z.string().regex(NAME, "must be a node name"),
  timestamp: z.number().int().nonnegative(),
  nonce: z.string().regex(/^[0-9a-f]{32}$/, "must be 32 hex digits"),
  checkedAt: z.number().int().nonnegative(),
  results: z.record(z.string().regex(NAME, "must be a node name"), z.boolean()),
  hmac: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 hex digits"),
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

export function signResult(body: ResultBody, key: Buffer): SignedResult {
  return { ...body, hmac: mac(body, key).toString("hex") };
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

/** A message outside the clock window (either way), or checked after it was sent. */
function clockProblem(
  message: ResultBody,
  now: number,
  windowMs: number,
): Extract<Verified, { ok: false }> | undefined {
  if (now - message.timestamp > windowMs || now - message.checkedAt > windowMs) {
    return {
      ok: false,
      reason: "stale",
      detail: `timestamp ${now - message.timestamp} ms old, window ${windowMs} ms`,
    };
  }
  if (message.timestamp - now > windowMs || message.checkedAt > message.timestamp) {
    return { ok: false, reason: "from-the-future", detail: "timestamp ahead of our clock window" };
  }
  return undefined;
}

/** Verifies a received body: shape, signature, clock window (±maxAge), then nonce. */
export function verifyResult(
  raw: unknown,
  options: {
    key: Buffer;
    /** The key before the last rotation, accepted for one clock window after it. */
    previousKey?: Buffer;
    guard: ReplayGuard;
    now: number;
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
  const given = Buffer.from(message.hmac, "hex");
  const signedWith = (key: Buffer | undefined): boolean =>
    key !== undefined && timingSafeEqual(mac(message, key), given);
  if (!signedWith(options.key) && !signedWith(options.previousKey)) {
    return { ok: false, reason: "bad-signature", detail: "hmac does not match the body" };
  }
  const { now, guard } = options;
  const clock = clockProblem(message, now, guard.windowMs);
  if (clock) return clock;
  if (!guard.admit(message.nonce, message.timestamp, now)) {
    return { ok: false, reason: "replayed", detail: `nonce ${message.nonce} already seen` };
  }
  return { ok: true, message };
}
