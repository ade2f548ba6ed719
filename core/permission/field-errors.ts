// zod issues as FieldErrors that name the full field path, as admission denials and status
// conditions print them: `spec.permissions[0].params.privileges[2]: must be one of …`.
import type { z } from "zod";
import { fail, ok, type FieldError, type Result } from "../result";

/** A field path from a prefix and a zod issue path: numbers become `[i]`, keys `.key`. */
export function fieldPath(prefix: string, path: readonly PropertyKey[]): string {
  let field = prefix;
  for (const key of path) {
    if (typeof key === "number") field += `[${key}]`;
    else field += field === "" ? String(key) : `.${String(key)}`;
  }
  return field;
}

/** Every issue of a failed parse, each under `prefix`. */
export function issueErrors(prefix: string, issues: readonly z.core.$ZodIssue[]): FieldError[] {
  return issues.map(issue => ({ field: fieldPath(prefix, issue.path), message: issue.message }));
}

/**
 * A parse-time error map: a missing field reads "is required" rather than zod's
 * "expected string, received undefined". Messages set on a schema still win.
 */
export const requiredFieldMessages: z.core.$ZodErrorMap = issue =>
  issue.code === "invalid_type" && issue.input === undefined ? "is required" : undefined;

/** Parses `value` with `schema`, every issue reported under `prefix`. */
export function parseFields<T>(schema: z.ZodType<T>, value: unknown, prefix: string): Result<T> {
  const parsed = schema.safeParse(value, { error: requiredFieldMessages });
  return parsed.success ? ok(parsed.data) : fail(issueErrors(prefix, parsed.error.issues));
}
