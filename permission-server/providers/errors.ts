// Helpers the providers share: the per-call deadline, params validation as a denial that names
// the field, and error text that never carries a secret.
import type { z } from "zod";
import { parseFields } from "../../core/permission/field-errors";
import { formatErrors } from "../../core/result";
import { TransientProviderError, type GrantState } from "./types";

/** The caller's signal combined with a per-call timeout, and which of the two fired. */
export interface Deadline {
  signal: AbortSignal;
  /** True when the timeout, not the caller, ended the call. */
  timedOut(): boolean;
}

export function deadline(caller: AbortSignal, timeoutMs: number): Deadline {
  const timeout = AbortSignal.timeout(timeoutMs);
  return {
    signal: AbortSignal.any([caller, timeout]),
    timedOut: () => timeout.aborted && !caller.aborted,
  };
}

/**
 * What to throw when a call failed: the caller's abort reason if the caller aborted (shutting
 * down is not a provider failure), a TransientProviderError if the timeout fired, else undefined.
 */
export function abortError(
  caller: AbortSignal,
  limit: Deadline,
  what: string,
  timeoutMs: number,
): unknown {
  if (caller.aborted) return caller.reason;
  if (limit.timedOut()) {
    return new TransientProviderError(`${what}: no answer within ${timeoutMs} ms`);
  }
  return undefined;
}

/** Params checked with the provider type's schema: the value, or a denial naming every field. */
export function parseParams<T>(
  schema: z.ZodType<T>,
  params: unknown,
): { ok: true; value: T } | { ok: false; denied: GrantState } {
  const parsed = parseFields(schema, params, "params");
  if (parsed.ok) return { ok: true, value: parsed.value };
  return { ok: false, denied: { state: "denied", reason: formatErrors(parsed.errors) } };
}

/** A short, single-line version of a backend's message. */
export function clip(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The `code` of a Node or driver error, if it has one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
