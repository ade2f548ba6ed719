// Expected failures are values: a parse or a decision returns a Result, bugs throw.

/** One problem, naming the field it is about (`metadata.annotations["…/canary-weight"]`, `spec.rules[0].host`). */
export interface FieldError {
  field: string;
  message: string;
}

export type Result<T> =
  | { ok: true; value: T; warnings: string[] }
  | { ok: false; errors: FieldError[]; warnings: string[] };

export function ok<T>(value: T, warnings: string[] = []): Result<T> {
  return { ok: true, value, warnings };
}

export function fail<T = never>(errors: FieldError[], warnings: string[] = []): Result<T> {
  return { ok: false, errors, warnings };
}

/** "field: message; field: message", for a denial or a log line. */
export function formatErrors(errors: FieldError[]): string {
  return errors.map(e => `${e.field}: ${e.message}`).join("; ");
}

// Denials, Events and logs carry these; a pasted certificate or a 256 KiB annotation must not
// flood them.
const MAX_QUOTED = 100;

/** `raw` as a JSON string, cut to its first 100 characters and "…". */
export function quote(raw: string): string {
  return JSON.stringify(raw.length > MAX_QUOTED ? `${raw.slice(0, MAX_QUOTED)}…` : raw);
}
